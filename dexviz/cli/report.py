"""``dexviz report``: write a saved run as one self-contained HTML replay file.

``dexviz report history.jsonl -o run.html`` (or ``dexviz report runs.db --flow ID``, a SQLite
store) writes the page ``run.to_html`` writes: both graphs, the panels, the failed attempts,
the event list and the timeline, with Prev/Next, a slider and jump-to-kind controls, and
nothing fetched from the network.
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
from dexviz.history._plural import plural

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
            "Write HISTORY (a .jsonl history, or a SQLite store with --flow) as ONE HTML file "
            "that replays the run offline: "
            "definition and lineage graphs, panels at every event, failed attempts with their "
            "errors, the event list and the timeline. Open it in any browser; no server."
        ),
    )
    report.add_argument("history", metavar="HISTORY",
                        help="a .jsonl history file, or a SQLite store (runs.db)")
    report.add_argument("-o", "--out", metavar="FILE.html",
                        help="output file (default: HISTORY with the suffix .html)")
    report.add_argument("--flow", metavar="ID",
                        help="the Flow id to report (needed for a store holding several)")
    report.add_argument("--channel", metavar="NAME",
                        help="a token Channel whose holdings the timeline draws in own lanes")
    report.add_argument("--source", metavar="FILE.py",
                        help="the Flow's source file for the definition graph "
                             "(default: the file recorded in the history)")
    report.add_argument("--graph", choices=("lineage", "definition"), default="lineage",
                        help="the graph shown first (default: %(default)s)")
    report.set_defaults(command=cmd_report, command_name="report")


def load_history(path: Path, flow: str | None) -> Any:
    """The history in ``path``: a ``.jsonl`` file, or Flow ``flow`` of a SQLite store.

    Raises:
        CliError: the file is missing or not a history or store, or it holds no such Flow.
    """
    check_source(path)
    with path.open("rb") as handle:
        is_store = handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    history = _from_store(path, flow) if is_store else _from_file(path, flow)
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
    """Write the HTML replay of a saved history."""
    from dexviz.report import write_report

    path = Path(args.history)
    history = load_history(path, args.flow)
    if args.source is not None:
        check_source(Path(args.source))
    source = args.source if args.source is not None else _recorded_source(history, path)
    out = Path(args.out) if args.out else path.with_suffix(".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"the report is an HTML file: name it *.html, not {str(out)!r}")
    refuse_symlinks(out)
    try:
        written = write_report(history, out, token_channel=args.channel,
                               flow_source=source, graph=args.graph)
    except OSError as error:
        raise CliError(f"cannot write {str(out)!r}: {describe(error)}") from error
    size = written.stat().st_size
    print(f"wrote {written} ({size / 1024:.0f} KiB, {len(history)} events)")
    return EXIT_OK


def _recorded_source(history: History, path: Path) -> str | None:
    """The recorded Flow source, looked up beside the history file too; else say how to pass it."""
    from dexviz.analysis.sources import find_recorded_source

    lookup = find_recorded_source(history.flow_spec, history_dir=path.parent)
    if lookup.found is not None:
        return str(lookup.found)
    hint = lookup.explain().replace(
        "pass flow_source= (a .py path, a module or the Flow class) to show it",
        "pass --source FILE.py to draw it")
    print(f"dexviz report: no definition graph: {hint}", file=sys.stderr)
    return None
