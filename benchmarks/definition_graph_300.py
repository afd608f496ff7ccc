"""Benchmark: a generated 300-Step Flow, from source file to SVG (target: under 2 s).

Run: ``.venv/bin/python benchmarks/definition_graph_300.py [--runs 5] [--steps 300]``

Two generated Flows (tests/fixtures/flows/generated.py): ``layered`` (blocks of ten Steps with
loop-built fan-outs, Channels, timers, self-loops and failure routes) and ``hub`` (every Step
waits on and publishes to one Channel and fails over to the start Step, so the renderer folds
those hub edges). Each run times the static analysis, the DOT text, and ``dot -Tsvg``; the
median of the runs is reported, as wall time and as CPU time (this process plus ``dot``), since
wall time on a shared machine includes waiting for a CPU. The script exits 1 when the median
wall time of either Flow is over the target.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from dexviz.viz.definition_view import definition_graph  # noqa: E402
from tests.fixtures.flows.generated import hub_flow_source, layered_flow_source  # noqa: E402

TARGET_SECONDS = 2.0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(source: Path) -> dict[str, float]:
    """Time one source-to-SVG pass: analysis, DOT text, Graphviz layout and SVG."""
    start_wall, start_cpu = time.perf_counter(), _cpu()
    view = definition_graph(source)
    analysed = time.perf_counter()
    dot = view.to_dot()
    dotted = time.perf_counter()
    svg = view.render("svg")
    done = time.perf_counter()
    assert svg.count(b'class="node step') == len(view.model.steps)
    return {
        "analysis": analysed - start_wall,
        "dot_text": dotted - analysed,
        "svg": done - dotted,
        "total": done - start_wall,
        "cpu": _cpu() - start_cpu,
        "dot_bytes": float(len(dot)),
    }


def run(name: str, make: Callable[[int], str], steps: int, runs: int, folder: Path) -> float:
    """Measure one generated Flow ``runs`` times; print and return the median total."""
    source = folder / f"{name}_{steps}.py"
    source.write_text(make(steps), encoding="utf-8")
    results = [measure(source) for _ in range(runs)]
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    print(
        f"{name:8} {steps} Steps: total {median['total']:.3f} s wall, {median['cpu']:.3f} s CPU "
        f"(analysis {median['analysis']:.3f} s, DOT text {median['dot_text']:.3f} s, "
        f"dot -Tsvg {median['svg']:.3f} s; {int(median['dot_bytes']):,} bytes of DOT; "
        f"median of {runs})"
    )
    return median["total"]


def main() -> int:
    """Run the benchmark; exit 1 when a Flow misses the 2 s target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        totals = [
            run("layered", layered_flow_source, args.steps, args.runs, Path(folder)),
            run("hub", hub_flow_source, args.steps, args.runs, Path(folder)),
        ]
    over = [t for t in totals if t > TARGET_SECONDS]
    print(f"target: under {TARGET_SECONDS:.1f} s per Flow -> {'FAIL' if over else 'ok'}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
