"""Dex server histories on the command line: Dex JSON files, or runs read with ``--server``.

A Dex JSON file is recognised by its content; ``--server HOST:PORT --flow ID [--run ID]``
reads the run over gRPC.

``dexviz report`` and ``dexviz history`` both take these; a Dex history becomes a History like
any other, so every view follows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from dexviz.cli.common import CliError, UsageError, describe

__all__ = ["add_dex_arguments", "dex_file_history", "dex_history", "dex_source", "out_file"]


def add_dex_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--server``, ``--run`` and ``--timeout`` (``--flow`` is the command's own)."""
    parser.add_argument("--server", metavar="HOST:PORT",
                        help="read the run from this Dex server over gRPC (with --flow ID); "
                             "needs pip install 'dexviz[server]'")
    parser.add_argument("--run", metavar="RUN_ID",
                        help="the run to read from --server (default: the Flow's current run) "
                             "or from a Dex JSON history holding several runs")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="seconds each call to --server may take (default: %(default)s)")


def dex_file_history(path: Path, flow: str | None, run: str | None) -> Any | None:
    """The History in ``path`` when it is a Dex history (JSON from Dex Web or dexcli), else None.

    A dexviz ``.jsonl`` history (several lines, or a dexviz header) is not one.

    Raises:
        CliError: the file is a Dex history but malformed, or holds no such Flow or run.
    """
    from dexviz.history.dex_json import looks_like_dex

    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not looks_like_dex(value):
        return None
    from dexviz.history.dex_history import from_dex_document
    from dexviz.history.dex_json import read_dex

    try:
        return _quiet(lambda: from_dex_document(read_dex(value, name=str(path)), flow_id=flow,
                                                run_id=run))
    except ValueError as error:  # HistoryFormatError included
        raise CliError(describe(error)) from error


def _quiet(load: Any) -> Any:
    """Run ``load``; a warning about unknown event types goes to stderr as one line."""
    import warnings

    from dexviz.history.dex_history import DexHistoryWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DexHistoryWarning)
        history = load()
    for warning in caught:
        print(f"warning: {describe(str(warning.message))}", file=sys.stderr)
    return history


def dex_history(args: argparse.Namespace) -> Any:
    """The History read from ``--server`` for ``--flow`` (and ``--run``).

    Raises:
        UsageError: ``--flow`` is missing or ``--timeout`` is not positive.
        CliError: the server cannot be read (unreachable, unknown Flow, timeout, bad page), or
            grpcio is not installed.
    """
    if not args.flow:
        raise UsageError("--server needs --flow FLOW_ID (the Flow whose run to read)")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    try:
        from dexviz.server import DexServerError, ServerExtraMissingError, connect
    except ImportError as error:  # pragma: no cover - the package itself is always there
        raise CliError(describe(error)) from error
    try:
        with connect(args.server, timeout=args.timeout) as server:
            return _quiet(lambda: server.history(args.flow, args.run, progress=False))
    except (DexServerError, ServerExtraMissingError) as error:
        raise CliError(describe(error)) from error
    except ValueError as error:
        raise CliError(describe(error)) from error


def dex_source(args: argparse.Namespace) -> Any | None:
    """For ``dexviz history``: the Dex History of ``--server`` or of a Dex JSON file, else None.

    Checks that ``args.path`` exists (or that ``--server`` replaces it).

    Raises:
        UsageError: both or neither of a path and ``--server``; ``--run`` on a dexviz file.
        CliError: the source cannot be read.
    """
    from dexviz.cli.common import check_source
    from dexviz.cli.stored import is_sqlite

    if args.server is not None:
        if args.path is not None:
            raise UsageError("give HISTORY or --server HOST:PORT, not both")
        return dex_history(args)
    if args.path is None:
        raise UsageError("give a HISTORY file, or --server HOST:PORT --flow ID")
    path = Path(args.path)
    check_source(path)
    found = None if is_sqlite(path) else dex_file_history(path, args.flow, args.run)
    if found is None and args.run is not None:
        raise UsageError(f"--run picks a run of a Dex history or of --server; {str(path)!r} "
                         "is not a Dex history")
    return found


def out_file(out: Path, flow_id: str | None) -> Path:
    """``out`` itself when it names an ``.html`` file, else ``out/<flow id>.html``.

    ``out`` is a folder when it is one already or has no suffix (it is then created).

    Raises:
        UsageError: ``out`` has another suffix (``run.svg``): it names neither.
    """
    if out.suffix.lower() in (".html", ".htm"):
        return out
    if out.suffix and not out.is_dir():
        raise UsageError(f"the report is an HTML file: name it *.html, or name a folder to "
                         f"write <flow id>.html into, not {str(out)!r}")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", flow_id or "flow").lstrip(".") or "flow"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot create the folder {str(out)!r}: {describe(error)}") from error
    return out / f"{name}.html"
