"""The ``dexviz`` command line: demo, run, history, graph, report, explore, diff, replay-check.

Each subcommand is one small ``_cmd_*`` function registered in :func:`build_parser`; dexviz
itself is imported inside them, so ``dexviz --help`` stays fast and error paths that need no
engine (a missing file, an unknown format) work on their own.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from dexviz.cli.common import (
    DETAIL_LINES,
    EXIT_FAILED,
    EXIT_OK,
    RUN_OUTPUT_NAMES,
    parse_flow_spec,
    positive_int,
    prepare_out_dir,
)
from dexviz.cli.diff import add_diff_parser
from dexviz.cli.explore import add_explore_parser
from dexviz.cli.failures import OneLineParser, add_debug_flag, run_reporting_failures
from dexviz.cli.graph import GRAPH_FORMATS, add_graph_parser
from dexviz.cli.replay_check import add_replay_check_parser
from dexviz.cli.report import add_report_parser
from dexviz.cli.run import add_history_parser, add_run_parser, write_views
from dexviz.history.output_files import write_output_text

__all__ = ["GRAPH_FORMATS", "DemoRun", "EditInterval", "find_overlaps", "main", "parse_flow_spec"]

DEFAULT_DEMO_OUT = "demo-output"
TOKEN_CHANNEL = "contractEditToken"
DEMO_OUTPUT_NAMES = ("definition.svg", "definition.dot")
"""What ``dexviz demo`` writes besides a run's views."""


class EditInterval(Protocol):
    """What the demo reads from one contract-edit record."""

    @property
    def reviewer(self) -> str:
        """The reviewer's name."""
        ...

    @property
    def outcome(self) -> str:
        """``"saved"``, ``"failed"`` or ``"withdrawn"``."""
        ...

    @property
    def started_at_millis(self) -> int:
        """Engine time, in ms, when the edit entered the protected section."""
        ...

    @property
    def finished_at_millis(self) -> int:
        """Engine time, in ms, when the edit left the protected section."""
        ...


class _History(Protocol):
    def to_jsonl(self) -> str: ...


class _Run(Protocol):
    @property
    def history(self) -> _History: ...


@dataclass(frozen=True)
class DemoRun:
    """The simulated contract-edit run and what the demo reports about it."""

    run: _Run
    status: str
    records: tuple[EditInterval, ...]
    error_message: str | None = None


# ---------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dexviz`` command with ``argv`` (default: ``sys.argv[1:]``).

    Args:
        argv: The arguments after the program name.

    Returns:
        The process exit code: 0 on success, 1 when a check fails or the command cannot do
        its work (reported as one line on stderr), 2 for a usage error, 130 when interrupted.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    return run_reporting_failures(command, args)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with one subparser per subcommand."""
    parser = OneLineParser(
        prog="dexviz",
        description="Dex in a notebook: simulate Dex Flows and draw what they do.",
    )
    parser.add_argument("--version", action="version", version=f"dexviz {_version()}")
    # Subparsers are OneLineParsers too (argparse uses the parent's class); typed as the base.
    subparsers = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(title="commands", metavar="COMMAND", required=True),
    )
    _add_demo_parser(subparsers)
    add_run_parser(subparsers)
    add_history_parser(subparsers)
    add_graph_parser(subparsers)
    add_report_parser(subparsers)
    add_explore_parser(subparsers)
    add_diff_parser(subparsers)
    add_replay_check_parser(subparsers)
    add_debug_flag(parser)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dexviz")
    except PackageNotFoundError:
        return "(not installed)"


# ---------------------------------------------------------------------------- demo


def _add_demo_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser(
        "demo",
        help="simulate the bundled contract-edit Flow and check its critical section",
        description=(
            "Simulate the Critical Section seed's ContractEditFlow, print the reviewers' "
            f"records (counts, then at most {DETAIL_LINES}), write the run's history and views, "
            "and exit 1 if two saved edits overlap."
        ),
    )
    demo.add_argument(
        "--out", default=DEFAULT_DEMO_OUT, help="output folder (default: %(default)s)"
    )
    demo.add_argument("--seed", type=int, default=0, help="simulation seed (default: %(default)s)")
    demo.add_argument(
        "--reviewers", type=positive_int, default=8, help="number of edits (default: %(default)s)"
    )
    demo.set_defaults(command=_cmd_demo, command_name="demo")


def _cmd_demo(args: argparse.Namespace) -> int:
    out_dir = Path(args.out)
    prepare_out_dir(out_dir, (*RUN_OUTPUT_NAMES, *DEMO_OUTPUT_NAMES))
    demo = _simulate_contract_edits(seed=args.seed, reviewers=args.reviewers)
    print(f"ContractEditFlow with {args.reviewers} reviewers, seed {args.seed}: {demo.status}")
    if demo.error_message:
        print(f"  error: {demo.error_message}")
    for line in summarize_records(demo.records, DETAIL_LINES):
        print(line)
    checked = _check_demo(demo)
    return max(checked, _write_demo_views(demo.run, out_dir))


def _write_demo_views(run: Any, out_dir: Path) -> int:
    """The demo's pictures: the Flow's definition graph, the run's graph and timeline."""
    import dexviz

    if not isinstance(run.history, dexviz.History):
        print(f"wrote {_write_history(run, out_dir)}")
        return EXIT_OK
    from dexviz.examples.contract_edit import ContractEditFlow

    graph = dexviz.definition_graph(ContractEditFlow)
    target = out_dir / ("definition.svg" if shutil.which("dot") else "definition.dot")
    graph.save(target)
    print(f"wrote {target}")
    return write_views(run.history, out_dir, TOKEN_CHANNEL)


def _simulate_contract_edits(*, seed: int, reviewers: int) -> DemoRun:
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, ContractEditRecord, sample_edits

    run = dexviz.simulate(ContractEditFlow(), sample_edits(reviewers), seed=seed)
    status = run.result.status.name
    if status != "COMPLETED":
        return DemoRun(run=run, status=status, records=(), error_message=run.result.error_message)
    records = run.result.single_output(list[ContractEditRecord])
    return DemoRun(run=run, status=status, records=tuple(records))


def format_records(records: Sequence[EditInterval], limit: int | None = None) -> list[str]:
    """Format one line per record: reviewer, outcome, start and finish relative to the first start.

    Args:
        records: The edit records in the order the Flow reported them.
        limit: Format only the first ``limit`` records (times stay relative to the first start
            of all of them); None formats every record.

    Returns:
        The lines, without trailing newlines.
    """
    if not records:
        return []
    origin = min(record.started_at_millis for record in records)
    shown = records if limit is None else records[:limit]
    width = max((len(record.reviewer) for record in shown), default=0)
    # Seconds, as every other line of the demo's output (run summary, sections table).
    return [
        f"  {record.reviewer:<{width}}  {record.outcome:<9}  "
        f"{(record.started_at_millis - origin) / 1000:>7.3f} s .. "
        f"{(record.finished_at_millis - origin) / 1000:>7.3f} s"
        for record in shown
    ]


def summarize_records(records: Sequence[EditInterval], limit: int) -> list[str]:
    """The demo's record lines: the counts by outcome, then at most ``limit`` records.

    Args:
        records: The edit records in the order the Flow reported them.
        limit: The most record lines to print; a last line says how many were left out.

    Returns:
        The lines, without trailing newlines (none for no records).
    """
    if not records:
        return []
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    known = [outcome for outcome in _OUTCOMES if outcome in counts]
    order = known + sorted(outcome for outcome in counts if outcome not in _OUTCOMES)
    by_outcome = ", ".join(f"{counts[outcome]} {outcome}" for outcome in order)
    lines = [f"  {len(records)} records: {by_outcome}", *format_records(records, limit)]
    if len(records) > limit:
        lines.append(f"  ... and {len(records) - limit} more records not shown")
    return lines


_OUTCOMES = ("saved", "failed", "withdrawn")


def find_overlaps(records: Sequence[EditInterval]) -> list[tuple[EditInterval, EditInterval]]:
    """Find pairs of saved edits whose ``[started, finished]`` intervals overlap.

    Intervals that only touch (one finishes when the other starts) do not overlap.

    Args:
        records: Edit records; only those with outcome ``"saved"`` are compared.

    Returns:
        Each overlapping pair once, the earlier-starting record first.
    """
    saved = sorted(
        (record for record in records if record.outcome == "saved"),
        key=lambda record: (record.started_at_millis, record.finished_at_millis),
    )
    overlaps = []
    for index, first in enumerate(saved):
        for second in saved[index + 1 :]:
            if second.started_at_millis >= first.finished_at_millis:
                break
            overlaps.append((first, second))
    return overlaps


def _check_demo(demo: DemoRun) -> int:
    if demo.status != "COMPLETED":
        print(f"dexviz demo: the Flow ended {demo.status}, not COMPLETED", file=sys.stderr)
        return EXIT_FAILED
    overlaps = find_overlaps(demo.records)
    for first, second in overlaps[:DETAIL_LINES]:
        print(
            f"dexviz demo: saved edits overlap: {first.reviewer} "
            f"[{first.started_at_millis}, {first.finished_at_millis}] and {second.reviewer} "
            f"[{second.started_at_millis}, {second.finished_at_millis}]",
            file=sys.stderr,
        )
    if len(overlaps) > DETAIL_LINES:
        print(
            f"dexviz demo: ... and {len(overlaps) - DETAIL_LINES} more overlapping pairs "
            f"({len(overlaps)} in all)",
            file=sys.stderr,
        )
    if overlaps:
        return EXIT_FAILED
    saved = sum(1 for record in demo.records if record.outcome == "saved")
    print(f"critical section held: no two of the {saved} saved edits overlap")
    return EXIT_OK


def _write_history(run: _Run, out_dir: Path) -> Path:
    return write_output_text(out_dir / "history.jsonl", run.history.to_jsonl())
