"""One benchmark measurement in this (fresh) process: ``python benchmarks/cases.py CASE ENGINE``.

``make bench`` (``benchmarks/bench.py``) runs each case in its own process, interleaved with
the same case on the reference engine (``benchmarks/reference_engine.py``), and prints one JSON
object per run on stdout. ENGINE is ``dexviz``, ``reference`` or, for the chains and the
hand-offs, ``floor`` (``benchmarks/floor_engine.py``: Dex's events without checks); cases
without a reference equivalent accept only ``dexviz``.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

import floor_engine as floor  # noqa: E402
import reference_engine as ref  # noqa: E402

CHAINS = 2000
IDLE_FLOWS = 10_000
HANDOFFS = 4000


# -- dexviz ---------------------------------------------------------------------------------
def dexviz_chain(flows: int = CHAINS) -> dict[str, float]:
    """Steps per second (wall and CPU) of ``flows`` ten-Step chains, in memory."""
    import _flows

    import dexviz

    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    for i in range(flows):
        client.start_flow(flow, f"chain-{i}", 0)
    wall, cpu = time.perf_counter(), time.process_time()
    engine.run_until_idle()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = flows * _flows.CHAIN_LENGTH
    return {"value": steps / wall, "cpu_value": steps / cpu}


def dexviz_handoff(contenders: int) -> dict[str, float]:
    """Microseconds per token hand-off with ``contenders`` branches waiting."""
    import _flows

    import dexviz

    _flows.ROUNDS = max(1, HANDOFFS // contenders)
    flow = _flows.Handoff()
    engine = dexviz.Engine([flow], seed=1)
    engine.client().start_flow(flow, "token", contenders)
    wall, cpu = time.perf_counter(), time.process_time()
    engine.run_until_idle()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    handoffs = _flows.ROUNDS * contenders
    return {"value": wall / handoffs * 1e6, "cpu_value": cpu / handoffs * 1e6}


def dexviz_fanout(width: int) -> dict[str, float]:
    """Milliseconds for a fan-out of ``width`` branches and their join."""
    import _flows

    import dexviz

    flow = _flows.FanOut()
    engine = dexviz.Engine([flow], seed=1)
    wall, cpu = time.perf_counter(), time.process_time()
    engine.client().start_flow(flow, "fan", width)
    engine.run_until_idle()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert engine.result("fan").single_output(int) == width
    return {"value": wall * 1e3, "cpu_value": cpu * 1e3}


def dexviz_idle(flows: int = IDLE_FLOWS) -> dict[str, float]:
    """Bytes per Flow parked on a Channel, history included (tracemalloc)."""
    import _flows

    import dexviz

    flow = _flows.Idle()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    client.start_flow(flow, "warm-up", -1)
    engine.run_until_idle()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(flows):
        client.start_flow(flow, f"idle-{i}", i)
    engine.run_until_idle()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"value": (after - before) / flows}


def dexviz_rss() -> dict[str, float]:
    """Peak RSS (MB) of this process after running the chains."""
    dexviz_chain()
    return {"value": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def dexviz_calls() -> dict[str, float]:
    """Python and builtin function calls per Step transition (cProfile, 500 chains)."""
    import cProfile
    import pstats

    import _flows

    import dexviz

    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    flows = 500
    for i in range(flows):
        client.start_flow(flow, f"chain-{i}", 0)
    profile = cProfile.Profile()
    profile.runcall(engine.run_until_idle)
    stats = pstats.Stats(profile)
    return {"value": stats.total_calls / (flows * _flows.CHAIN_LENGTH)}  # type: ignore[attr-defined]


def dexviz_gc() -> dict[str, float]:
    """The garbage collector's share of the wall time of a long run (10,000 chains, 100 k steps).

    Measured over ``run_until_idle`` (the Flows are started before), with ``gc.callbacks``.
    """
    import _flows

    import dexviz

    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1)
    client = engine.client()
    for i in range(10_000):
        client.start_flow(flow, f"chain-{i}", 0)
    with _gc_timer() as share:
        engine.run_until_idle()
    return {"value": share[0]}


@contextmanager
def _gc_timer() -> Iterator[list[float]]:
    """Yield a list whose first item becomes the collector's share (%) of the block's wall time."""
    share = [0.0]
    spent = [0.0, 0.0]

    def timer(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            spent[1] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - spent[1]

    gc.callbacks.append(timer)
    wall = time.perf_counter()
    try:
        yield share
    finally:
        wall = time.perf_counter() - wall
        gc.callbacks.remove(timer)
        share[0] = spent[0] / wall * 100


def dexviz_store() -> dict[str, float]:
    """The durable store's metrics (benchmarks/store_sqlite.py): every mode, bytes, recovery."""
    import store_sqlite

    results = store_sqlite.collect(flows=300, runs=1, open_flows=1000)
    flat = {
        f"{mode}_{key}": value for mode, found in results.items() for key, value in found.items()
    }
    return {"value": flat["normal_steps_s"], **flat}


def dexviz_graph() -> dict[str, float]:
    """Seconds from a generated 300-Step Flow's source to its SVG (layered)."""
    import definition_graph_300 as graph

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "layered_300.py"
        source.write_text(graph.layered_flow_source(300), encoding="utf-8")
        return {"value": graph.measure(source)["total"]}


def dexviz_debugger() -> dict[str, float]:
    """Median milliseconds per Debugger Next with every panel redrawn (2,000-event history)."""
    import statistics

    import debugger_step as step

    from dexviz.widgets import Debugger

    history, _ = step.build_history(2000, 0)
    debugger = Debugger(history, token_channel=step.TOKEN)
    debugger.graph_svg()
    samples = [step.timed(lambda: (debugger.next(), step.panels(debugger))) for _ in range(300)]
    return {"value": statistics.median(samples)}


def dexviz_explore(what: str) -> dict[str, float]:
    """dexviz.explore: seconds to prove the seed's Flow or to find the broken one's bug; or rate."""
    import explore as exploring

    wall, cpu = time.perf_counter(), time.process_time()
    if what == "rate":
        ends = [exploring.checks.terminates()]
        report = exploring.explore(exploring.ThreeChains(), 0, check=ends, strategy="random",
                                   max_schedules=200, progress=False)
    else:
        proof = what == "proof"
        flow = exploring.ContractEditFlow() if proof else exploring.BrokenContractEditFlow()
        report = exploring.explore(flow, exploring.reviewers(3), check=exploring.CHECKS,
                                   faults=exploring.BUDGET if proof else None, progress=False)
        assert report.proven if proof else report.violations
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if what == "rate":
        return {"value": report.schedules / wall, "cpu_value": report.schedules / cpu}
    return {"value": wall, "cpu_value": cpu}


# -- the reference engine and the Dex floor --------------------------------------------------
def dexviz_snapshot(reviewers: int) -> dict[str, float]:
    """CPU us per Engine.snapshot() + restore() of the seed Flow mid-run (snapshot_restore.py)."""
    import snapshot_restore

    return snapshot_restore.measure(reviewers)


def reference_chain(flows: int = CHAINS) -> dict[str, float]:
    """The same chains on the reference engine (the collector paused, as ``Engine.run`` does)."""
    return _small_chains(ref, ref.RefEngine(seed=1), flows, paused=True)


def reference_handoff(contenders: int) -> dict[str, float]:
    """The same token hand-off on the reference engine (the collector paused, as in dexviz)."""
    return _small_handoff(ref, ref.RefEngine(seed=1), contenders, paused=True)


def floor_chain(flows: int = CHAINS) -> dict[str, float]:
    """The same chains on the Dex floor, the collector paused as ``Engine.run`` pauses it."""
    return _small_chains(floor, floor.FloorEngine(seed=1), flows, paused=True)


def floor_handoff(contenders: int) -> dict[str, float]:
    """The same token hand-off on the Dex floor (``floor_engine.py``): Dex's events, no checks.

    With the collector paused as ``Engine.run`` pauses it, so the two compare like for like.
    """
    return _small_handoff(floor, floor.FloorEngine(seed=1), contenders, paused=True)


def _small_chains(module: Any, engine: Any, flows: int, *, paused: bool) -> dict[str, float]:
    """Steps per second of ``flows`` chains on the reference engine or the floor (``module``)."""
    for i in range(flows):
        engine.start(f"chain-{i}", module.Link, 0)
    collector = _collector(paused)
    wall, cpu = time.perf_counter(), time.process_time()
    with collector:
        steps = engine.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert steps == flows * module.CHAIN_LENGTH
    return {"value": steps / wall, "cpu_value": steps / cpu}


def _small_handoff(
    module: Any, engine: Any, contenders: int, *, paused: bool
) -> dict[str, float]:
    """Microseconds per hand-off on the reference engine or the floor (``module``)."""
    module.ROUNDS = max(1, HANDOFFS // contenders)
    engine.start("token", module.Contend, contenders)
    collector = _collector(paused)
    wall, cpu = time.perf_counter(), time.process_time()
    with collector:
        engine.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    handoffs = module.ROUNDS * contenders
    return {"value": wall / handoffs * 1e6, "cpu_value": cpu / handoffs * 1e6}


def _collector(paused: bool) -> AbstractContextManager[None]:
    """``Engine.run``'s pause of the collector (``collector_paused``), or nothing."""
    return _paused() if paused else nullcontext()


@contextmanager
def _paused() -> Iterator[None]:
    """What ``dexviz.history.collector.collector_paused`` does, without importing dexviz.

    Importing it would put dexviz's modules into the reference's peak RSS.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def reference_gc() -> dict[str, float]:
    """The collector's share of the reference engine's 10,000-chain run, paused as dexviz does.

    The collector is paused while the reference runs and resumed inside the measured time, as
    ``Engine.run`` does (``collector_paused``), so the one collection of the run's survivors counts.
    """
    engine = ref.RefEngine(seed=1)
    for i in range(10_000):
        engine.start(f"chain-{i}", ref.Link, 0)
    collector = _collector(paused=True)
    with _gc_timer() as share, collector:
        engine.run()
    return {"value": share[0]}


def reference_fanout(width: int) -> dict[str, float]:
    """The same fan-out and join on the reference engine (the collector paused, as in dexviz)."""
    engine = ref.RefEngine(seed=1)
    wall, cpu = time.perf_counter(), time.process_time()
    with _paused():
        engine.start("fan", ref.Fan, width)
        engine.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert engine.flows["fan"].outputs == [width]
    return {"value": wall * 1e3, "cpu_value": cpu * 1e3}


def reference_idle(flows: int = IDLE_FLOWS) -> dict[str, float]:
    """Bytes per parked Flow on the reference engine."""
    engine = ref.RefEngine(seed=1)
    engine.start("warm-up", ref.Park, -1)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(flows):
        engine.start(f"idle-{i}", ref.Park, i)
    engine.run()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"value": (after - before) / flows}


def reference_rss() -> dict[str, float]:
    """Peak RSS (MB) after the reference engine's chains."""
    reference_chain()
    return {"value": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


CASES: dict[str, dict[str, Callable[[], dict[str, float]]]] = {
    "chain": {"dexviz": dexviz_chain, "reference": reference_chain, "floor": floor_chain},
    "handoff2": {
        "dexviz": lambda: dexviz_handoff(2),
        "reference": lambda: reference_handoff(2),
        "floor": lambda: floor_handoff(2),
    },
    "handoff1000": {
        "dexviz": lambda: dexviz_handoff(1000),
        "reference": lambda: reference_handoff(1000),
        "floor": lambda: floor_handoff(1000),
    },
    "fanout100": {"dexviz": lambda: dexviz_fanout(100), "reference": lambda: reference_fanout(100)},
    "fanout10000": {
        "dexviz": lambda: dexviz_fanout(10_000),
        "reference": lambda: reference_fanout(10_000),
    },
    "idle": {"dexviz": dexviz_idle, "reference": reference_idle},
    "rss": {"dexviz": dexviz_rss, "reference": reference_rss},
    "calls": {"dexviz": dexviz_calls},
    "gc": {"dexviz": dexviz_gc, "reference": reference_gc},
    "store": {"dexviz": dexviz_store},
    "graph": {"dexviz": dexviz_graph},
    "debugger": {"dexviz": dexviz_debugger},
    "explore_proof": {"dexviz": lambda: dexviz_explore("proof")},
    "explore_bug": {"dexviz": lambda: dexviz_explore("bug")},
    "explore_rate": {"dexviz": lambda: dexviz_explore("rate")},
    "snapshot3": {"dexviz": lambda: dexviz_snapshot(3)},
    "snapshot8": {"dexviz": lambda: dexviz_snapshot(8)},
}


def main() -> int:
    """Run one case on one engine and print its result as JSON."""
    case, engine = sys.argv[1], sys.argv[2]
    print(json.dumps(CASES[case][engine]()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
