"""``make bench``: every benchmark in fresh processes, interleaved with the reference engine.

Run: ``python benchmarks/bench.py [--runs 3] [--only chain,idle]``. Each run of each case is
its own process (so import state, caches and the heap start clean), the dexviz and reference
runs of a case alternate, and each number is the median of the runs. Engine speed ratios
use CPU time (``time.process_time``), which a busy shared machine disturbs far less than wall
time; wall-time medians are printed beside them. Prints one table and the load average, and
exits 1 when a goal is missed.

The token hand-off and the chains are also measured against ``floor_engine.py``, which keeps
exactly Dex's per-transition contract (Dex's events for each method attempt, no checks): the
hand-off goal is dexviz <= 2.5x the floor's time, the chains' <= 2.0x. The "Dex floor" rows
against the reference are context.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Row:
    """One line of the table: how to compute dexviz's and the reference's numbers, and the goal."""

    metric: str
    unit: str
    dexviz: Callable[[dict[str, dict[str, float]]], float]
    reference: Callable[[dict[str, dict[str, float]]], float] | None
    ratio: Callable[[float, float], float] | None
    goal: str
    met: Callable[[float, float | None], bool]


def _cpu(case: str, engine: str) -> Callable[[dict[str, dict[str, float]]], float]:
    return lambda r: r[f"{case}/{engine}"].get("cpu_value", r[f"{case}/{engine}"]["value"])


def _value(case: str, engine: str) -> Callable[[dict[str, dict[str, float]]], float]:
    return lambda r: r[f"{case}/{engine}"]["value"]


def _metric(case: str, metric: str) -> Callable[[dict[str, dict[str, float]]], float]:
    return lambda r: r[f"{case}/dexviz"][metric]


def _store(metric: str) -> Callable[[dict[str, dict[str, float]]], float]:
    return lambda r: r["store/dexviz"][metric]


def _store_ratio(top: str, bottom: str) -> Callable[[dict[str, dict[str, float]]], float]:
    return lambda r: r["store/dexviz"][top] / r["store/dexviz"][bottom]


def _flatness(r: dict[str, dict[str, float]]) -> float:
    return _cpu("handoff1000", "dexviz")(r) / _cpu("handoff2", "dexviz")(r)


def _linearity(r: dict[str, dict[str, float]]) -> float:
    per_branch_10k = _cpu("fanout10000", "dexviz")(r) / 10_000
    return per_branch_10k / (_cpu("fanout100", "dexviz")(r) / 100)


ROWS = [
    Row("10-step chains x 2,000, steps/s (CPU)", "steps/s", _cpu("chain", "dexviz"),
        _cpu("chain", "reference"), lambda d, r: d / r, ">= 0.40x ref",
        lambda d, r: r is not None and d / r >= 0.40),
    Row("chains, Dex floor / dexviz time (CPU)", "x", _cpu("chain", "dexviz"),
        _cpu("chain", "floor"), lambda d, f: f / d, "<= 2.0x floor",
        lambda d, f: f is not None and f / d <= 2.0),
    Row("Dex floor: 10-step chains, no checks, steps/s (CPU)", "steps/s", _cpu("chain", "floor"),
        _cpu("chain", "reference"), lambda d, r: d / r, "(context)", lambda d, r: True),
    Row("token hand-off K=2, us (CPU)", "us", _cpu("handoff2", "dexviz"),
        _cpu("handoff2", "reference"), lambda d, r: d / r, "(context)", lambda d, r: True),
    Row("token hand-off K=2, x Dex floor (CPU)", "us", _cpu("handoff2", "dexviz"),
        _cpu("handoff2", "floor"), lambda d, f: d / f, "<= 2.5x floor",
        lambda d, f: f is not None and d / f <= 2.5),
    Row("token hand-off K=1000, x Dex floor (CPU)", "us", _cpu("handoff1000", "dexviz"),
        _cpu("handoff1000", "floor"), lambda d, f: d / f, "<= 2.5x floor",
        lambda d, f: f is not None and d / f <= 2.5),
    Row("hand-off flatness K=1000 / K=2", "x", _flatness, None, None, "<= 1.5",
        lambda d, r: d <= 1.5),
    Row("Dex floor: hand-off K=2 with Dex's 8 events, no checks, us (CPU)", "us",
        _cpu("handoff2", "floor"), _cpu("handoff2", "reference"), lambda d, r: d / r,
        "(context)", lambda d, r: True),
    Row("Dex floor: hand-off K=1000, us (CPU)", "us", _cpu("handoff1000", "floor"),
        _cpu("handoff1000", "reference"), lambda d, r: d / r, "(context)", lambda d, r: True),
    Row("fan-out W=10,000 + join, ms (CPU)", "ms", _cpu("fanout10000", "dexviz"),
        _cpu("fanout10000", "reference"), lambda d, r: r / d, "speed >= 0.25x ref",
        lambda d, r: r is not None and r / d >= 0.25),
    Row("fan-out linearity: per branch 10k / 100", "x", _linearity, None, None, "<= 2",
        lambda d, r: d <= 2),
    Row("idle waiting Flow, bytes (tracemalloc)", "B", _value("idle", "dexviz"),
        _value("idle", "reference"), lambda d, r: d / r, "<= 2,048 B",
        lambda d, r: d <= 2048),
    Row("peak RSS, 2,000 chains, MB", "MB", _value("rss", "dexviz"), _value("rss", "reference"),
        lambda d, r: d / r, "<= 2x ref", lambda d, r: r is not None and d / r <= 2),
    Row("import dexviz, CPU ms over bare python", "ms", _value("import", "dexviz"), None, None,
        "<= 100 ms", lambda d, r: d <= 100),
    Row("from dexviz import Engine, Flow, go_to, CPU ms", "ms", _value("import_engine", "dexviz"),
        None, None, "<= 100 ms", lambda d, r: d <= 100),
    Row("calls per transition (cProfile)", "calls", _value("calls", "dexviz"), None, None,
        "<= 30", lambda d, r: d <= 30),
    Row("GC share of a 10,000-chain run, %", "%", _value("gc", "dexviz"), _value("gc", "reference"),
        None, "< 10 %", lambda d, r: d < 10),
    Row("SQLite NORMAL, 300 chains, steps/s (wall)", "steps/s", _store("normal_steps_s"),
        _store("normal_reference_steps_s"), lambda d, r: d / r, ">= 0.8x same SQL",
        lambda d, r: r is not None and d / r >= 0.8),
    Row("SQLite group / NORMAL, steps/s (wall)", "x", _store_ratio("group_steps_s",
        "normal_steps_s"), None, None, ">= 0.9", lambda d, r: d >= 0.9),
    Row("SQLite FULL, 60 chains, steps/s (wall)", "steps/s", _store("full_steps_s"),
        _store("full_reference_steps_s"), lambda d, r: d / r, ">= 0.8x same SQL",
        lambda d, r: r is not None and d / r >= 0.8),
    Row("fsync latency of this disk, us", "us", _store("disk_fsync_us"), None, None, "(measured)",
        lambda d, r: True),
    Row("SQLite bytes per step", "B", _store("normal_bytes"), None, None, "<= 300 B",
        lambda d, r: d <= 300),
    Row("recovery per open Flow (1,000 open), ms", "ms", _store("recovery_ms_per_flow"), None,
        None, "<= 1 ms", lambda d, r: d <= 1),
    Row("300-Step Flow source -> SVG, s (wall)", "s", _value("graph", "dexviz"), None, None,
        "< 2 s", lambda d, r: d < 2),
    Row("Debugger Next + panels, median ms (wall)", "ms", _value("debugger", "dexviz"), None,
        None, "< 150 ms", lambda d, r: d < 150),
    Row("explore: seed Flow, 3 reviewers + 1 failure, dpor proof, s (CPU)", "s",
        _cpu("explore_proof", "dexviz"), None, None, "<= 60 s", lambda d, r: d <= 60),
    Row("explore: broken variant found + shrunk, s (CPU)", "s", _cpu("explore_bug", "dexviz"),
        None, None, "<= 10 s", lambda d, r: d <= 10),
    Row("snapshot + restore, seed Flow, 3 reviewers mid-run, us (CPU)", "us",
        _value("snapshot3", "dexviz"), None, None, "(measured)", lambda d, r: True),
    Row("snapshot + restore, seed Flow, 8 reviewers mid-run, us (CPU)", "us",
        _value("snapshot8", "dexviz"), None, None, "<= 50 us", lambda d, r: d <= 50),
    Row("snapshot alone, seed Flow, 3 reviewers mid-run, us (CPU)", "us",
        _metric("snapshot3", "snapshot_us"), None, None, "(measured)", lambda d, r: True),
    Row("snapshot alone, seed Flow, 8 reviewers mid-run, us (CPU)", "us",
        _metric("snapshot8", "snapshot_us"), None, None, "(measured)", lambda d, r: True),
    Row("explore: 31-transition Flow, schedules/s (CPU)", "/s", _cpu("explore_rate", "dexviz"),
        None, None, "(measured)", lambda d, r: True),
]  # fmt: skip

ENGINE_CASES = ["chain", "handoff2", "handoff1000", "fanout100", "fanout10000", "idle", "rss",
                "gc"]
DEXVIZ_CASES = ["calls", "store", "graph", "debugger", "explore_proof", "explore_bug",
                "explore_rate", "snapshot3", "snapshot8"]
ENGINES = {case: ("dexviz", "reference", "floor") for case in ("chain", "handoff2", "handoff1000")}
"""Cases run on more engines than dexviz and the reference (see ``floor_engine.py``)."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_case(case: str, engine: str) -> dict[str, float]:
    """Run one case in a fresh interpreter and return its JSON result."""
    out = subprocess.run(
        [sys.executable, str(HERE / "cases.py"), case, engine],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def import_ms(statement: str, runs: int) -> float:
    """Median CPU ms (user + system) of ``python -c statement`` minus ``python -c pass``.

    CPU time of the child, not wall time: on a loaded machine a child waits for a core, and
    that wait is not import work. The two runs alternate.
    """
    deltas = []
    for _ in range(max(runs, 7)):
        costs = []
        for code in ("pass", statement):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], env=_env(), check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            costs.append(
                after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            )
        deltas.append((costs[1] - costs[0]) * 1e3)
    return statistics.median(deltas)


def collect(runs: int, only: set[str] | None) -> dict[str, dict[str, float]]:
    """Every case's median over ``runs`` fresh-process runs, dexviz and reference interleaved."""
    samples: dict[str, list[dict[str, float]]] = {}
    for _ in range(runs):
        for case in ENGINE_CASES + DEXVIZ_CASES:
            if only is not None and case not in only:
                continue
            engines = ENGINES.get(case) or (
                ("dexviz", "reference") if case in ENGINE_CASES else ("dexviz",)
            )
            for engine in engines:
                samples.setdefault(f"{case}/{engine}", []).append(run_case(case, engine))
    results = {
        key: {k: statistics.median(s[k] for s in runs_) for k in runs_[0]}
        for key, runs_ in samples.items()
    }
    if only is None or "import" in only:
        results["import/dexviz"] = {"value": import_ms("import dexviz", runs)}
        engine_import = "from dexviz import Engine, Flow, go_to"
        results["import_engine/dexviz"] = {"value": import_ms(engine_import, runs)}
    return results


def table(results: dict[str, dict[str, float]]) -> tuple[str, bool]:
    """The results as a Markdown table, and whether every measured goal is met."""
    lines = [
        "| metric | dexviz | reference | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    all_met = True
    for row in ROWS:
        try:
            mine = row.dexviz(results)
        except KeyError:
            continue
        theirs = row.reference(results) if row.reference else None
        ratio = row.ratio(mine, theirs) if row.ratio and theirs else None
        met = row.met(mine, theirs)
        all_met = all_met and met
        lines.append(
            f"| {row.metric} | {mine:,.4g} | {'' if theirs is None else f'{theirs:,.4g}'} | "
            f"{'' if ratio is None else f'{ratio:.3g}'} | {row.goal} | "
            f"{'yes' if met else '**no**'} |"
        )
    return "\n".join(lines), all_met


def main() -> int:
    """Measure, print the table with the load average, exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="comma-separated cases (chain, idle, import, ...)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    before = os.getloadavg()
    results = collect(args.runs, only)
    after = os.getloadavg()
    text, met = table(results)
    print(text)
    print(
        f"\nmedians of {args.runs} fresh-process runs; load average (1, 5, 15 min) "
        f"{before[0]:.2f} {before[1]:.2f} {before[2]:.2f} before, "
        f"{after[0]:.2f} {after[1]:.2f} {after[2]:.2f} after; {os.cpu_count()} CPUs"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
