"""Snapshot + restore of the seed's ContractEditFlow mid-run, microseconds per pair.

``python benchmarks/snapshot_restore.py [REVIEWERS ...]`` (default 3 and 8). The run goes to
its middle unit at which no coroutine handler is in flight, then ``Engine.snapshot()`` and
``Engine.restore()`` alternate; the median of the CPU time per pair over several batches is
printed, one JSON object per reviewer count. A second row per count (``"coroutine": true``)
does the same at the middle unit at which an edit is suspended in its ``await asyncio.sleep``
(its trace is kept, and re-driven on every restore). ``make bench`` runs it through
``cases.py`` (``snapshot3``, ``snapshot8``: the rows without a coroutine).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dexviz import Engine  # noqa: E402
from dexviz.engine import EngineSnapshot  # noqa: E402
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow  # noqa: E402

BATCH = 200
BATCHES = 7


def _start(reviewers: int) -> Engine:
    flow = ContractEditFlow()
    engine = Engine([flow], seed=3)
    engine.client().start_flow(flow, "flow-1", [ContractEdit(f"r{i}") for i in range(reviewers)])
    return engine


def _in_flight(engine: Engine) -> bool:
    """Whether a coroutine handler is in flight (suspended, or its outcome on its way back)."""
    return bool(engine.snapshot()._state.coroutines)  # type: ignore[union-attr]


def mid_run(reviewers: int, coroutine: bool = False) -> tuple[Engine, EngineSnapshot, int]:
    """An engine of the seed Flow at the middle of its units with (or without) a coroutine
    handler in flight, and its snapshot."""
    engine = _start(reviewers)
    points: list[int] = []
    units = 0
    while not engine.is_idle:
        engine.step()
        units += 1
        if _in_flight(engine) == coroutine:
            points.append(units)
    target = points[len(points) // 2]
    engine = _start(reviewers)
    for _ in range(target):
        engine.step()
    return engine, engine.snapshot(), len(engine.history("flow-1"))


def measure(reviewers: int, coroutine: bool = False) -> dict[str, float]:
    """CPU µs per snapshot + restore (median of batches), µs for each alone, and the size."""
    engine, snapshot, events = mid_run(reviewers, coroutine)
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
        print(json.dumps({"reviewers": reviewers, "coroutine": True, **measure(reviewers, True)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
