"""Engine benchmarks (simulation, in memory): chain throughput, fan-out linearity, token
hand-off cost versus contenders, and memory per idle waiting Flow.

Run: ``.venv/bin/python benchmarks/engine_throughput.py [--runs 3]``. Prints one line per
measurement with the median of the runs and the goal from shared/spec/perf-anchors.md §5c.
Never run as a timed unit test.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _flows  # noqa: E402

import dexviz  # noqa: E402


def _median(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def chain(flows: int = 2000) -> float:
    """Step transitions per second over ``flows`` ten-Step chains in one engine."""
    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    start = time.perf_counter()
    for i in range(flows):
        client.start_flow(flow, f"chain-{i}", 0)
    engine.run_until_idle()
    return flows * _flows.CHAIN_LENGTH / (time.perf_counter() - start)


def fan_out(width: int) -> float:
    """Microseconds per branch of a fan-out of ``width`` branches with a join."""
    flow = _flows.FanOut()
    engine = dexviz.Engine([flow], seed=1)
    start = time.perf_counter()
    engine.client().start_flow(flow, "fan", width)
    engine.run_until_idle()
    elapsed = time.perf_counter() - start
    assert engine.result("fan").single_output(int) == width
    return elapsed / width * 1e6


def handoff(contenders: int, handoffs: int = 4000) -> float:
    """Microseconds per token hand-off with ``contenders`` branches waiting."""
    _flows.ROUNDS = max(1, handoffs // contenders)
    flow = _flows.Handoff()
    engine = dexviz.Engine([flow], seed=1)
    start = time.perf_counter()
    engine.client().start_flow(flow, "token", contenders)
    engine.run_until_idle()
    elapsed = time.perf_counter() - start
    return elapsed / (_flows.ROUNDS * contenders) * 1e6


def idle_bytes(flows: int = 20000) -> float:
    """Bytes of memory per Flow parked on a Channel (tracemalloc)."""
    flow = _flows.Idle()
    gc.collect()
    tracemalloc.start()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(flows):
        client.start_flow(flow, f"idle-{i}", i)
    engine.run_until_idle()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / flows


def main() -> None:
    """Run every measurement and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"chain: {_median(runs, chain):,.0f} transitions/s (goal G3 >= 100,000)")
    per_branch = {w: _median(runs, lambda w=w: fan_out(w)) for w in (10, 100, 1000, 10000)}
    for width, micros in per_branch.items():
        print(f"fan-out W={width}: {micros:.1f} us/branch")
    print(f"fan-out linearity: {per_branch[10000] / per_branch[100]:.2f}x (goal <= 2x)")
    per_handoff = {k: _median(runs, lambda k=k: handoff(k)) for k in (2, 10, 100, 1000)}
    for k, micros in per_handoff.items():
        print(f"token hand-off K={k}: {micros:.1f} us")
    print(f"hand-off flatness: {per_handoff[1000] / per_handoff[2]:.2f}x (goal <= 1.5x)")
    print(f"idle waiting Flow: {idle_bytes():,.0f} B (goal G10 <= 2,048 B, history included)")


if __name__ == "__main__":
    main()
