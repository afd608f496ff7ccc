"""Durable commits: 10-step chains with every commit in its own SQLite transaction.

Run: ``.venv/bin/python benchmarks/store_sqlite.py [--flows 300] [--runs 3]``. Prints
transitions/s for synchronous=FULL (an fsync per commit) and NORMAL, against the in-memory
store, with the goals G1 and G2 of shared/spec/perf-anchors.md §5c.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _flows  # noqa: E402

import dexviz  # noqa: E402


def chain(flows: int, store: dexviz.Store) -> float:
    """Transitions per second of ``flows`` ten-Step chains committed to ``store``."""
    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1, store=store)
    client = engine.client()
    start = time.perf_counter()
    for i in range(flows):
        client.start_flow(flow, f"chain-{i}", 0)
    engine.run_until_idle()
    return flows * _flows.CHAIN_LENGTH / (time.perf_counter() - start)


def main() -> None:
    """Measure each store and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for label, make, goal in (
            ("memory", dexviz.MemoryStore, ""),
            (
                "sqlite FULL",
                lambda: dexviz.SQLiteStore(Path(folder) / f"{time.time_ns()}.db"),
                " (goal G1 >= 4,000)",
            ),
            (
                "sqlite NORMAL",
                lambda: dexviz.SQLiteStore(
                    Path(folder) / f"{time.time_ns()}.db", synchronous="NORMAL"
                ),
                " (goal G2 >= 15,000)",
            ),
        ):
            rate = statistics.median(chain(args.flows, make()) for _ in range(args.runs))
            print(f"{label:14s} {rate:10,.0f} transitions/s{goal}")


if __name__ == "__main__":
    main()
