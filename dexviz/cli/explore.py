"""``dexviz explore``: run a Flow from a file under every interleaving and check properties.

Exit 0 when no check was violated (the report says whether the search was exhaustive), 1 on a
violation (the shortest trace is printed and its history written to ``--out``), 2 on bad input.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from dexviz.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    UsageError,
    check_source,
    describe,
    parse_flow_spec,
    positive_int,
    prepare_out_dir,
)

CHECK_HELP = (
    "a property to prove: exclusive:CHANNEL, conserved:CHANNEL[:COUNT], terminates, "
    "status:STATUS, eventually_closes (liveness: every fair run closes; its own search, "
    "bounded by --max-schedules states) (repeatable)"
)
CHECK_KINDS = ("exclusive", "conserved", "terminates", "status", "eventually_closes")


def add_explore_parser(subparsers: Any) -> None:
    """Register ``dexviz explore``."""
    explore = subparsers.add_parser(
        "explore",
        help="run a Flow under every interleaving and check properties",
        description=(
            "Import FILE.py, start its Flow with the JSON input, and explore its schedules "
            "(dpor: one per class of equivalent interleavings). Exit 1 with the shortest "
            "counterexample (its history written to --out) when a check is violated."
        ),
    )
    explore.add_argument("source", metavar="FILE.py[:FlowName]",
                         help="the file defining (or importing) the Flow; :FlowName picks one")
    explore.add_argument("--input", default="null",
                         help="the start input as JSON (default: %(default)s)")
    explore.add_argument("--check", action="append", default=[], help=CHECK_HELP)
    explore.add_argument("--strategy", default="dpor",
                         choices=("dpor", "dfs", "stateful", "pct", "random"),
                         help="dpor (default): one schedule per class of equivalent "
                              "interleavings; dfs: every schedule; stateful: each distinct "
                              "state once, breadth first; pct, random: samples")
    explore.add_argument("--fail", action="append", default=[], metavar="STEP[:COUNT]",
                         help="a failure budget: up to COUNT (1) failed Execute attempts of STEP")
    explore.add_argument("--max-schedules", type=positive_int, metavar="N",
                         help="stop after N schedules (stateful: N distinct states)")
    explore.add_argument("--max-depth", type=positive_int, metavar="STEPS",
                         help="cut every schedule after STEPS steps (then not a proof)")
    explore.add_argument("--time-budget", type=float, metavar="SECONDS",
                         help="stop starting schedules after SECONDS")
    explore.add_argument("--seed", type=int, default=0, help="seed of pct and random")
    explore.add_argument("--no-prune", dest="prune", action="store_false",
                         help="dfs and dpor: run on past states already explored (to compare "
                              "counts or debug the pruning)")
    explore.add_argument("--workers", type=positive_int, metavar="N",
                         help="stateful: expand each level on N processes (default: the "
                              "machine's cores; the results are the same for any N)")
    explore.add_argument("--cluster", metavar="ADDRESS",
                         help="stateful: expand on the Dask scheduler at ADDRESS "
                              "(tcp://host:8786; needs dexviz[cluster])")
    explore.add_argument("--out", default="explore-output",
                         help="where a counterexample's history goes (default: %(default)s)")
    explore.set_defaults(command=cmd_explore, command_name="explore")


def parse_check(text: str) -> Any:
    """Turn ``exclusive:CHANNEL`` and the other forms into a built-in check."""
    from dexviz import FlowStatus
    from dexviz.explore import checks

    kind, _, rest = text.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "exclusive" and len(parts) == 1:
        return checks.exclusive(parts[0])
    if kind == "conserved" and len(parts) in (1, 2):
        count = _count(parts[1], text) if len(parts) == 2 else 1
        return checks.conserved(parts[0], count)
    if kind == "terminates" and not parts:
        return checks.terminates()
    if kind == "eventually_closes" and not parts:
        return checks.eventually_closes()
    if kind == "status" and len(parts) == 1:
        try:
            return checks.status(FlowStatus[parts[0].upper()])
        except KeyError:
            names = ", ".join(s.name for s in FlowStatus)
            raise UsageError(f"--check {text!r}: unknown status (one of {names})") from None
    close = difflib.get_close_matches(kind, CHECK_KINDS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close and close[0] != kind else ""
    raise UsageError(f"--check {text!r}{hint}: expected {CHECK_HELP.split(': ', 1)[1]}")


def _count(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{option!r}: {text!r} is not a whole number") from None


def parse_budget(values: list[str]) -> Any:
    """One FaultBudget from ``--fail STEP[:COUNT]`` options (their counts add up)."""
    from dexviz.explore import FaultBudget

    if not values:
        return None
    steps: list[str] = []
    total = 0
    for value in values:
        step, _, count = value.partition(":")
        steps.append(step)
        total += _count(count, f"--fail {value}") if count else 1
    return FaultBudget.of(*steps, count=total)


def _parallel(args: argparse.Namespace) -> dict[str, Any]:
    if (args.workers not in (None, 1) or args.cluster) and args.strategy != "stateful":
        raise UsageError("--workers and --cluster need --strategy stateful")
    return {"workers": args.workers, "cluster": args.cluster}


def _liveness(flow: Any, initial: Any, checks: list[Any], args: argparse.Namespace) -> Any:
    """The liveness search's report for ``eventually_closes`` (None: no liveness check)."""
    from dexviz.explore.checks import LivenessCheck
    from dexviz.explore.liveness import DEFAULT_MAX_STATES, explore_liveness

    live = [c for c in checks if isinstance(c, LivenessCheck)]
    if not live:
        return None
    if len(live) != len(checks):
        raise UsageError("--check eventually_closes runs its own search: give it without the "
                         "other checks (run those in a second dexviz explore)")  # fmt: skip
    if args.workers not in (None, 1) or args.cluster:
        raise UsageError("--check eventually_closes runs in this process: drop --workers and "
                         "--cluster")  # fmt: skip
    bound = args.max_schedules or DEFAULT_MAX_STATES
    return explore_liveness(flow, initial, check=live, faults=parse_budget(args.fail),
                            max_states=bound)  # fmt: skip


def cmd_explore(args: argparse.Namespace) -> int:
    """Explore a Flow from a file; print the verdict and any shortest counterexample."""
    from dexviz.cli.run import load_flow, start_input
    from dexviz.explore import explore
    from dexviz.explore.check_names import UnknownNameError

    path, name = parse_flow_spec(args.source)
    check_source(path)
    checks = [parse_check(text) for text in args.check]
    if not checks:
        raise UsageError("give at least one --check (e.g. --check terminates)")
    flow = load_flow(path, name)
    initial = start_input(flow, args.input)
    try:
        live = _liveness(flow, initial, checks, args)
        report = live if live is not None else explore(
            flow, initial, check=checks, faults=parse_budget(args.fail),
            strategy=args.strategy, max_schedules=args.max_schedules, max_depth=args.max_depth,
            time_budget=args.time_budget, seed=args.seed, progress=True, prune=args.prune,
            **_parallel(args),
        )
    except CliError:
        raise
    except UnknownNameError as error:
        raise UsageError(str(error)) from None
    except Exception as error:
        raise CliError(describe(error)) from error
    print(report)
    if report.ok:
        return EXIT_OK
    out = Path(args.out)
    prepare_out_dir(out, ("counterexample.jsonl",))
    run = report.violations[0].replay()
    target = out / "counterexample.jsonl"
    run.history.save(target)
    print(f"counterexample history (violating commit at seq {run.violating_seq}): {target}")
    return EXIT_FAILED
