"""Snapshot + restore of the seed's ContractEditFlow mid-run, microseconds per pair.

``python benchmarks/snapshot_restore.py [REVIEWERS ...]`` (default 3 and 8). The run goes to
its middle unit at which no coroutine handler is in flight (the edits ``await`` a sleep, and a
suspended coroutine cannot be copied), then ``Engine.snapshot()`` and ``Engine.restore()``
alternate; the median of the CPU time per pair over several batches is printed, one JSON
object per reviewer count. ``make bench`` runs it through ``cases.py`` (``snapshot3``,
``snapshot8``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dexviz import Engine  # noqa: E402
from dexviz.engine import EngineSnapshot, SnapshotError  # noqa: E402
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow  # noqa: E402

BATCH = 200
BATCHES = 7


def mid_run(reviewers: int) -> tuple[Engine, EngineSnapshot, int]:
    """An engine of the seed Flow at the middle of its snapshottable units, and its snapshot."""
    flow = ContractEditFlow()
    engine = Engine([flow], seed=3)
    engine.client().start_flow(flow, "flow-1", [ContractEdit(f"r{i}") for i in range(reviewers)])
    points: list[int] = []
    units = 0
    while not engine.is_idle:
        engine.step()
        units += 1
        try:
            engine.snapshot()
        except SnapshotError:
            continue
        points.append(units)
    target = points[len(points) // 2]
    engine = Engine([flow], seed=3)
    engine.client().start_flow(flow, "flow-1", [ContractEdit(f"r{i}") for i in range(reviewers)])
    for _ in range(target):
        engine.step()
    return engine, engine.snapshot(), len(engine.history("flow-1"))


def measure(reviewers: int) -> dict[str, float]:
    """CPU µs per snapshot + restore (median of batches), µs for each alone, and the size."""
    engine, snapshot, events = mid_run(reviewers)
    pairs, takes, restores = [], [], []
    for _ in range(BATCHES):
        start = time.process_time()
        for _ in range(BATCH):
            engine.restore(engine.snapshot())
        pairs.append((time.process_time() - start) / BATCH * 1e6)
        start = time.process_time()
        for _ in range(BATCH):
            engine.snapshot()
        takes.append((time.process_time() - start) / BATCH * 1e6)
        start = time.process_time()
        for _ in range(BATCH):
            engine.restore(snapshot)
        restores.append((time.process_time() - start) / BATCH * 1e6)
    return {
        "value": statistics.median(pairs),
        "snapshot_us": statistics.median(takes),
        "restore_us": statistics.median(restores),
        "bytes": len(snapshot.data),
        "events": events,
    }


def main() -> int:
    """Print one JSON result per reviewer count."""
    for reviewers in [int(a) for a in sys.argv[1:]] or [3, 8]:
        print(json.dumps({"reviewers": reviewers, **measure(reviewers)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
