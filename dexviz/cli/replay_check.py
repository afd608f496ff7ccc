"""``dexviz replay-check RUNS FILE.py``: replay recorded runs against the Flow code as it is now.

RUNS is a SQLite store, a directory of history files, or one history file. Each run's verdict
is printed; a progress bar runs on stderr in a terminal. Exit 0 when every run replays
compatibly, 1 when any diverges (or cannot be replayed), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from dexviz.cli.common import EXIT_FAILED, EXIT_OK, CliError, check_source, parse_flow_spec


def add_replay_check_parser(subparsers: Any) -> None:
    """Register ``dexviz replay-check``."""
    replay = subparsers.add_parser(
        "replay-check",
        help="replay recorded runs against the current Flow code; exit 1 if any diverges",
        description=(
            "Re-run every recorded run of RUNS (a SQLite store, a directory of history "
            "files, or one history file) against the Flow in FILE.py, driven by the recorded "
            "order of work (not the seed: runs that shared an engine replay too), input, "
            "injected faults and client publishes, and compare every method's result with the "
            "recorded one. Prints each run's verdict; exit 1 when any diverges (a method "
            "result that differs, or an order the current code cannot follow)."
        ),
    )
    replay.add_argument("runs", metavar="RUNS", help="runs.db, a folder of *.jsonl, or one file")
    replay.add_argument("source", metavar="FILE.py[:FlowName]")
    replay.add_argument("--quiet", action="store_true",
                        help="print only the runs that do not replay compatibly")
    replay.set_defaults(command=cmd_replay_check, command_name="replay-check")


class ProgressBar:
    """A one-line text bar on a terminal stream (nothing when the stream is not a terminal)."""

    WIDTH = 30

    def __init__(self, stream: TextIO, *, force: bool = False) -> None:
        self.stream = stream
        self.enabled = force or stream.isatty()

    def update(self, done: int, total: int) -> None:
        """Redraw the bar at ``done`` of ``total`` runs."""
        if not self.enabled:
            return
        filled = self.WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} runs")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def cmd_replay_check(args: argparse.Namespace) -> int:
    """Run ``dexviz replay-check``."""
    from dexviz.cli.run import load_flow

    path, name = parse_flow_spec(args.source)
    check_source(path)
    flow = load_flow(path, name)
    runs = Path(args.runs)
    if not runs.exists():
        raise CliError(f"no such file or folder: {args.runs!r}")
    bar = ProgressBar(sys.stderr)
    verdicts = _check(runs, flow, bar)
    diverging = 0
    for verdict in verdicts:
        if not verdict.compatible:
            diverging += 1
        if not (args.quiet and verdict.compatible):
            print(verdict.describe())
    print(f"{len(verdicts) - diverging} of {len(verdicts)} runs replay compatibly; "
          f"{diverging} diverge or cannot be replayed")
    return EXIT_FAILED if diverging else EXIT_OK


def _check(runs: Path, flow: Any, bar: ProgressBar) -> tuple[Any, ...]:
    from dexviz.compare.replay_store import RunVerdict, replay_check_store
    from dexviz.compare.run_sources import is_sqlite

    if runs.is_file() and not is_sqlite(runs):
        from dexviz.compare.replay import ReplayError, replay_check
        from dexviz.history import HistoryFormatError

        try:
            return (RunVerdict(runs.name, replay_check(runs, flow)),)
        except (ReplayError, HistoryFormatError) as error:
            return (RunVerdict(runs.name, None, str(error)),)
    try:
        checked = replay_check_store(runs, flow,
                                     progress=lambda done, total, _: bar.update(done, total))
    except ValueError as error:
        raise CliError(str(error)) from None
    return checked.verdicts
