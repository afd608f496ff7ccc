"""The ``dexviz`` command line: ``dexviz demo`` and ``dexviz graph``.

Each subcommand is one small ``_cmd_*`` function registered in :func:`build_parser`; dexviz
itself is imported inside them, so ``dexviz --help`` stays fast and error paths that need no
engine (a missing file, an unknown format) work on their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["EditInterval", "GRAPH_FORMATS", "find_overlaps", "main", "parse_flow_spec"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

GRAPH_FORMATS = (".svg", ".png", ".pdf", ".dot", ".json", ".md")
"""File suffixes ``dexviz graph -o`` accepts; ``-o -`` prints DOT text instead."""

DEFAULT_DEMO_OUT = "demo-output"


class CliError(Exception):
    """A problem with the user's input, reported as one line on stderr with exit code 2."""


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
        The process exit code: 0 on success, 1 when a check fails, 2 for bad input.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except CliError as error:
        print(f"dexviz {args.command_name}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with one subparser per subcommand."""
    parser = argparse.ArgumentParser(
        prog="dexviz",
        description="Dex in a notebook: simulate Dex Flows and draw what they do.",
    )
    parser.add_argument("--version", action="version", version=f"dexviz {_version()}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    _add_demo_parser(subparsers)
    _add_graph_parser(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dexviz")
    except PackageNotFoundError:
        return "(not installed)"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# ---------------------------------------------------------------------------- demo


def _add_demo_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser(
        "demo",
        help="simulate the bundled contract-edit Flow and check its critical section",
        description=(
            "Simulate the Critical Section seed's ContractEditFlow, print each reviewer's "
            "record, write the run's history, and exit 1 if two saved edits overlap."
        ),
    )
    demo.add_argument(
        "--out", default=DEFAULT_DEMO_OUT, help="output folder (default: %(default)s)"
    )
    demo.add_argument("--seed", type=int, default=0, help="simulation seed (default: %(default)s)")
    demo.add_argument(
        "--reviewers", type=_positive_int, default=8, help="number of edits (default: %(default)s)"
    )
    demo.set_defaults(command=_cmd_demo, command_name="demo")


def _cmd_demo(args: argparse.Namespace) -> int:
    demo = _simulate_contract_edits(seed=args.seed, reviewers=args.reviewers)
    print(f"ContractEditFlow with {args.reviewers} reviewers, seed {args.seed}: {demo.status}")
    if demo.error_message:
        print(f"  error: {demo.error_message}")
    for line in format_records(demo.records):
        print(line)
    out_dir = Path(args.out)
    _prepare_out_dir(out_dir)
    print(f"wrote {_write_history(demo.run, out_dir)}")
    return _check_demo(demo)


def _simulate_contract_edits(*, seed: int, reviewers: int) -> DemoRun:
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, ContractEditRecord, sample_edits

    run = dexviz.simulate(ContractEditFlow(), sample_edits(reviewers), seed=seed)
    status = run.result.status.name
    if status != "COMPLETED":
        return DemoRun(run=run, status=status, records=(), error_message=run.result.error_message)
    records = run.result.single_output(list[ContractEditRecord])
    return DemoRun(run=run, status=status, records=tuple(records))


def format_records(records: Sequence[EditInterval]) -> list[str]:
    """Format one line per record: reviewer, outcome, start and finish relative to the first start.

    Args:
        records: The edit records in the order the Flow reported them.

    Returns:
        The lines, without trailing newlines.
    """
    if not records:
        return []
    origin = min(record.started_at_millis for record in records)
    width = max(len(record.reviewer) for record in records)
    return [
        f"  {record.reviewer:<{width}}  {record.outcome:<9}  "
        f"{record.started_at_millis - origin:>7} ms .. {record.finished_at_millis - origin:>7} ms"
        for record in records
    ]


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
    for first, second in overlaps:
        print(
            f"dexviz demo: saved edits overlap: {first.reviewer} "
            f"[{first.started_at_millis}, {first.finished_at_millis}] and {second.reviewer} "
            f"[{second.started_at_millis}, {second.finished_at_millis}]",
            file=sys.stderr,
        )
    if overlaps:
        return EXIT_FAILED
    saved = sum(1 for record in demo.records if record.outcome == "saved")
    print(f"critical section held: no two of the {saved} saved edits overlap")
    return EXIT_OK


def _prepare_out_dir(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot create output folder {str(out_dir)!r}: {error}") from error


def _write_history(run: _Run, out_dir: Path) -> Path:
    path = out_dir / "history.jsonl"
    path.write_text(run.history.to_jsonl(), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- graph


def _add_graph_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    graph = subparsers.add_parser(
        "graph",
        help="draw a Flow's definition graph from its source file",
        description=(
            "Draw the Flow Definition Graph of a Flow in a Python file, by static analysis "
            "(the file is never imported or run)."
        ),
    )
    graph.add_argument(
        "source",
        metavar="FILE.py[:FlowName]",
        help="the file and, if it has several Flows, the Flow class to draw",
    )
    graph.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="OUT",
        help=f"output file, format by suffix ({' '.join(GRAPH_FORMATS)}); '-' prints DOT "
        "(default: %(default)s)",
    )
    graph.add_argument("--lr", action="store_true", help="lay the graph out left to right")
    graph.add_argument(
        "--hide-resources", action="store_true", help="leave out Channel and Attribute nodes"
    )
    graph.set_defaults(command=_cmd_graph, command_name="graph")


def parse_flow_spec(spec: str) -> tuple[Path, str | None]:
    """Split ``FILE.py[:FlowName]`` into the path and the optional Flow class name.

    Args:
        spec: The command-line argument.

    Returns:
        The path and the Flow name, or None when no name was given.
    """
    path, sep, name = spec.rpartition(":")
    if sep and path and name.isidentifier():
        return Path(path), name
    return Path(spec), None


def _cmd_graph(args: argparse.Namespace) -> int:
    path, flow = parse_flow_spec(args.source)
    _check_source(path)
    output: str = args.output
    if output != "-":
        _check_graph_format(output)
    options = _graph_options(args)
    try:
        graph = _definition_graph(path, flow, options)
        if output == "-":
            sys.stdout.write(graph.to_dot())
        else:
            graph.save(output)
    except Exception as error:  # one clear line instead of a traceback, whatever went wrong
        raise CliError(_describe(error)) from error
    if output != "-":
        print(f"wrote {output}")
    return EXIT_OK


def _check_source(path: Path) -> None:
    if not path.exists():
        raise CliError(f"no such file: {str(path)!r}")
    if not path.is_file():
        raise CliError(f"not a file: {str(path)!r}")


def _check_graph_format(output: str) -> None:
    suffix = Path(output).suffix.lower()
    if suffix not in GRAPH_FORMATS:
        raise CliError(
            f"unknown output format {suffix or output!r} (the suffix of -o must be one of "
            f"{list(GRAPH_FORMATS)}, or use '-o -' for DOT on stdout)"
        )


def _graph_options(args: argparse.Namespace) -> dict[str, object]:
    options: dict[str, object] = {}
    if args.lr:
        options["rankdir"] = "LR"
    if args.hide_resources:
        options["hide_resources"] = True
    return options


class _Graph(Protocol):
    def to_dot(self) -> str: ...

    def save(self, path: str) -> object: ...


def _definition_graph(path: Path, flow: str | None, options: dict[str, object]) -> _Graph:
    import dexviz

    graph: _Graph = dexviz.definition_graph(str(path), flow=flow, **options)
    return graph


def _describe(error: BaseException) -> str:
    # Multi-line messages (an install hint, say) are joined so stderr gets exactly one line.
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return text or type(error).__name__
