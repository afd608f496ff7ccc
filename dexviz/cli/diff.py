"""``dexviz diff A B``: compare two saved runs, print what differs, write the side-by-side view.

Exit 0 when the runs do not differ, 1 when they do (or cannot be read), 2 for bad usage.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dexviz.cli.common import EXIT_FAILED, EXIT_OK, CliError, UsageError, prepare_out_dir
from dexviz.history.output_files import write_output_text

DIFF_OUTPUT_NAMES = ("diff.html", "diff.txt", "replay.html")
"""What ``dexviz diff --out DIR`` writes."""


def add_diff_parser(subparsers: Any) -> None:
    """Register ``dexviz diff``."""
    diff = subparsers.add_parser(
        "diff",
        help="compare two saved runs, aligned by Step execution lineage",
        description=(
            "Load two runs (history files, or SQLite stores with --flow-a/--flow-b), align "
            "them by Step execution lineage, print the first divergence and every difference, "
            "and write into --out: diff.html (side-by-side timeline and table), diff.txt, and "
            "replay.html (the HTML replay of A stepping B with it, both states side by side "
            "at each aligned event). Exit 1 when they differ."
        ),
    )
    diff.add_argument("a", metavar="A", help="history.jsonl or runs.db")
    diff.add_argument("b", metavar="B", help="history.jsonl or runs.db")
    diff.add_argument("--flow-a", help="the Flow id to read from store A")
    diff.add_argument("--flow-b", help="the Flow id to read from store B")
    diff.add_argument("--out", help="write diff.html, diff.txt and replay.html into this folder")
    diff.add_argument("--tolerance", type=float, default=1.0, metavar="SECONDS",
                      help="ignore timing differences up to this (default: %(default)s)")
    diff.add_argument("--no-timing", action="store_true", help="do not compare timing")
    diff.add_argument("--limit", type=int, default=40,
                      help="print at most this many differences (default: %(default)s)")
    diff.set_defaults(command=cmd_diff, command_name="diff")


def cmd_diff(args: argparse.Namespace) -> int:
    """Run ``dexviz diff``."""
    if args.tolerance < 0:
        raise UsageError(f"--tolerance must be >= 0, got {args.tolerance}")
    if args.limit < 0:
        raise UsageError(f"--limit must be >= 0, got {args.limit}")
    from dexviz.compare import diff

    a, b = _source(args.a, args.flow_a), _source(args.b, args.flow_b)
    result = diff(a, b, tolerance_s=None if args.no_timing else args.tolerance)
    summary = result.summary(args.limit)
    print(summary)
    if args.out:
        out_dir = Path(args.out)
        prepare_out_dir(out_dir, DIFF_OUTPUT_NAMES)
        result.to_html(out_dir / "diff.html")
        write_output_text(out_dir / "diff.txt", result.summary(len(result)) + "\n")
        from dexviz.report import write_report

        write_report(a, out_dir / "replay.html", compare=b)
        print(f"wrote {out_dir / 'diff.html'} and {out_dir / 'replay.html'}")
    return EXIT_FAILED if result else EXIT_OK


def _source(path_text: str, flow_id: str | None) -> Any:
    from dexviz.compare.run_sources import is_sqlite, load_history
    from dexviz.history import HistoryFormatError

    path = Path(path_text)
    if not path.is_file():
        raise CliError(f"no such file: {path_text!r}")
    if flow_id is not None and not is_sqlite(path):
        raise UsageError(f"{path_text!r} is a history file, not a store: drop its --flow option")
    try:
        return load_history(path, flow_id)
    except (HistoryFormatError, ValueError) as error:
        raise CliError(str(error)) from None
