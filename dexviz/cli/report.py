"""``dexviz report``: write a saved run as one self-contained HTML replay file.

``dexviz report history.jsonl -o run.html`` (or ``dexviz report runs.db --flow ID``, a SQLite
store, or a Dex server's history: a Dex Web / dexcli JSON file, recognised by its content, or
``--server HOST:PORT --flow ID [--run ID]``) writes the page ``run.to_html`` writes: both
graphs, the panels, the failed attempts, the event list and the timeline, with Prev/Next, a
slider and jump-to-kind controls, and nothing fetched from the network. ``-o`` names an
``.html`` file or a folder (then the page is ``<flow id>.html`` in it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dexviz.cli.common import (
    EXIT_OK,
    CliError,
    UsageError,
    check_source,
    describe,
    refuse_symlinks,
)
from dexviz.cli.dex_input import add_dex_arguments, dex_file_history, dex_history, out_file
from dexviz.history._plural import plural
from dexviz.history.output_files import OutputWriteError

if TYPE_CHECKING:
    from dexviz.history import History

__all__ = ["add_report_parser", "cmd_report", "load_history"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def add_report_parser(subparsers: Any) -> None:
    """Register ``dexviz report``."""
    report = subparsers.add_parser(
        "report",
        help="write a saved run as one self-contained HTML replay",
        description=(
            "Write HISTORY (a .jsonl history, a SQLite store with --flow, a Dex history saved "
            "from Dex Web or dexcli, or --server HOST:PORT --flow ID) as ONE HTML file "
            "that replays the run offline: "
            "definition and lineage graphs, panels at every event, failed attempts with their "
            "errors, the event list and the timeline. Open it in any browser; no server. "
            "With --compare B the page steps a second run with it, as Debugger(a, compare=b): "
            "at every event both runs' state at the aligned event, side by side, and what "
            "differs there."
        ),
    )
    report.add_argument("history", metavar="HISTORY", nargs="?",
                        help="a .jsonl history file, a SQLite store (runs.db), or a Dex "
                             "history JSON file (not with --server)")
    report.add_argument("-o", "--out", metavar="FILE.html|DIR",
                        help="output file, or a folder to write <flow id>.html into "
                             "(default: HISTORY with the suffix .html)")
    report.add_argument("--flow", metavar="ID",
                        help="the Flow id to report (needed for a store holding several)")
    report.add_argument("--channel", metavar="NAME",
                        help="a token Channel whose holdings the timeline draws in own lanes")
    report.add_argument("--source", metavar="FILE.py",
                        help="the Flow's source file for the definition graph "
                             "(default: the file recorded in the history)")
    report.add_argument("--graph", choices=("lineage", "definition"), default="lineage",
                        help="the graph shown first (default: %(default)s)")
    report.add_argument("--compare", metavar="B",
                        help="a second run (a .jsonl history or a SQLite store) to step "
                             "together with HISTORY, aligned by Step execution lineage")
    report.add_argument("--compare-flow", metavar="ID",
                        help="the Flow id to read from the --compare store")
    add_dex_arguments(report)
    report.set_defaults(command=cmd_report, command_name="report")


def load_history(path: Path, flow: str | None, run: str | None = None) -> Any:
    """The history in ``path``: a ``.jsonl`` file, a SQLite store's Flow, or a Dex history.

    ``flow`` picks the Flow of a store; ``run`` one run of a Dex history (default: all).

    Raises:
        CliError: the file is missing or not a history or store, or it holds no such Flow.
    """
    check_source(path)
    with path.open("rb") as handle:
        is_store = handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    dex = None if is_store else dex_file_history(path, flow, run)
    if run is not None and dex is None:
        raise UsageError(f"--run picks a run of a Dex history or of --server; {str(path)!r} "
                         "is not a Dex history")
    history = dex if dex is not None else (
        _from_store(path, flow) if is_store else _from_file(path, flow))
    if not len(history):
        raise CliError(f"{str(path)!r} holds no event: there is nothing to replay")
    return history


def _from_file(path: Path, flow: str | None) -> Any:
    import dexviz

    try:
        history = dexviz.History.load(path)
    except (dexviz.HistoryFormatError, UnicodeDecodeError) as error:
        raise CliError(describe(error)) from error
    if flow is not None and len(history) and history.flow_id != flow:
        raise UsageError(f"{str(path)!r} holds Flow {history.flow_id!r}, not {flow!r}")
    return history


def _from_store(path: Path, flow: str | None) -> Any:
    from dexviz.engine import SQLiteStore, StoreError

    try:
        store = SQLiteStore(path, readonly=True)
    except StoreError as error:
        raise CliError(describe(error)) from error
    try:
        flows = store.flow_ids()
        if flow is None and len(flows) == 1:
            flow = flows[0]
        if flow is None or flow not in flows:
            listed = ", ".join(flows) or "none"
            what = "choose one with --flow ID" if flow is None else f"it has no Flow {flow!r}"
            raise UsageError(f"{str(path)!r} is a store of {plural(len(flows), 'Flow')} "
                             f"({listed}); {what}")
        return store.history(flow)
    except StoreError as error:
        raise CliError(describe(error)) from error
    finally:
        store.close()


def cmd_report(args: argparse.Namespace) -> int:
    """Write the HTML replay of a saved history (or of a run read from a Dex server)."""
    from dexviz.report import write_report

    if args.server is not None:
        if args.history is not None:
            raise UsageError("give HISTORY or --server HOST:PORT, not both")
        history = dex_history(args)
        default = beside = Path(".")
    elif args.history is None:
        raise UsageError("give a HISTORY file, or --server HOST:PORT --flow ID")
    else:
        path = Path(args.history)
        history = load_history(path, args.flow, args.run)
        default = path.with_suffix(".html")
        beside = path.parent
    if args.source is not None:
        check_source(Path(args.source))
    source = args.source if args.source is not None else _recorded_source(history, beside)
    out = out_file(Path(args.out), history.flow_id) if args.out else (
        out_file(default, history.flow_id))
    refuse_symlinks(out)
    compared = _compared(args)
    try:
        written = write_report(history, out, token_channel=args.channel,
                               flow_source=source, graph=args.graph, compare=compared)
    except OutputWriteError as error:  # names the file already
        raise CliError(describe(error)) from error
    except OSError as error:
        raise CliError(f"cannot write {str(out)!r}: {describe(error)}") from error
    size = written.stat().st_size
    print(f"wrote {written} ({size / 1024:.0f} KiB, {len(history)} events)")
    return EXIT_OK


def _compared(args: argparse.Namespace) -> Any:
    """The ``--compare`` run, or None."""
    if args.compare is None:
        if args.compare_flow is not None:
            raise UsageError("--compare-flow picks the Flow of a --compare store: give --compare")
        return None
    return load_history(Path(args.compare), args.compare_flow)


def _recorded_source(history: History, beside: Path) -> str | None:
    """The recorded Flow source, looked up in ``beside`` (the history's folder) too.

    Prints how to pass it with ``--source`` when it cannot be found.
    """
    from dexviz.analysis.sources import find_recorded_source

    lookup = find_recorded_source(history.flow_spec, history_dir=beside)
    if lookup.found is not None:
        return str(lookup.found)
    hint = lookup.explain().replace(
        "pass flow_source= (a .py path, a module or the Flow class) to show it",
        "pass --source FILE.py to draw it")
    print(f"dexviz report: no definition graph: {hint}", file=sys.stderr)
    return None
