"""``dexviz graph``: draw a Flow's definition graph from its source file (never imported)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Protocol

from dexviz.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    UsageError,
    check_source,
    describe,
    parse_flow_spec,
    refuse_symlinks,
)

GRAPH_FORMATS = (".svg", ".png", ".pdf", ".dot", ".json", ".md")
"""File suffixes ``dexviz graph -o`` accepts; ``-o -`` prints DOT text instead."""


def add_graph_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``dexviz graph``."""
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


def _cmd_graph(args: argparse.Namespace) -> int:
    path, flow = parse_flow_spec(args.source)
    output: str = args.output
    if output != "-":
        _check_graph_format(output)
        refuse_symlinks(Path(output))
    check_source(path)
    graph = _definition_graph(path, flow, _graph_options(args))
    try:
        if output == "-":
            sys.stdout.write(graph.to_dot())
        else:
            graph.save(output)
    except OSError:
        raise
    except Exception as error:  # Graphviz missing or failing: one clear line
        raise CliError(describe(error)) from error
    if output != "-":
        print(f"wrote {output}")
    return _report_diagnostics(graph)


def _report_diagnostics(graph: _Graph) -> int:
    """Print the analyzer's errors and warnings to stderr; exit 1 if there is an error."""
    diagnostics = graph.model.diagnostics
    for diagnostic in diagnostics:
        print(f"dexviz graph: {describe(diagnostic.format())}", file=sys.stderr)
    errors = sum(1 for d in diagnostics if d.severity == "error")
    return EXIT_FAILED if errors else EXIT_OK


def _check_graph_format(output: str) -> None:
    suffix = Path(output).suffix.lower()
    if suffix not in GRAPH_FORMATS:
        raise UsageError(
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


class _Diagnostic(Protocol):
    @property
    def severity(self) -> str: ...

    def format(self) -> str: ...


class _Model(Protocol):
    @property
    def diagnostics(self) -> tuple[_Diagnostic, ...]: ...


class _Graph(Protocol):
    model: _Model

    def to_dot(self) -> str: ...

    def save(self, path: str) -> object: ...


def _definition_graph(path: Path, flow: str | None, options: dict[str, object]) -> _Graph:
    import dexviz
    from dexviz.analysis.definition import DefinitionSourceError

    try:
        graph: _Graph = dexviz.definition_graph(str(path), flow=flow, **options)
    except DefinitionSourceError as error:
        # Naming a Flow the file lacks, or none when it has several, is a command-line mistake.
        wrong_name = error.code == "multiple_flows" or (flow and error.code == "flow_not_found")
        raise (UsageError if wrong_name else CliError)(describe(error)) from error
    return graph
