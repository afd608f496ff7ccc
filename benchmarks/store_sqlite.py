"""Durable commits: 10-step chains, each engine commit one SQLite transaction, against the SQL.

Run: ``.venv/bin/python benchmarks/store_sqlite.py [--flows 300] [--runs 3] [--open 1000]``.

For each durability mode (``normal``, ``group``, ``full``) it runs the chains with a
``SQLiteStore``, keeps every commit's events, then replays exactly the same rows into a fresh
database of the same schema, one transaction per commit, with no engine around it: that replay
is the *reference doing the same SQL*, measured in the same process right after. It also
reports the database bytes per step, the fsync latency of this disk, and the time to open a
database holding ``--open`` waiting Flows and resume them all (recovery). Prints a table and
exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _flows  # noqa: E402

import dexviz  # noqa: E402
from dexviz.engine.sqlite.sqlite_schema import SCHEMA, SCHEMA_VERSION, encode  # noqa: E402
from dexviz.history.event import Event  # noqa: E402


class RecordingStore(dexviz.SQLiteStore):
    """A SQLiteStore that also keeps each commit's events, for the SQL-only replay."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[list[tuple[str, Sequence[Event]]]] = []

    def commit_many(self, commits: Sequence[tuple[str, Sequence[Event]]]) -> None:
        super().commit_many(commits)
        self.log.append(list(commits))


def engine_run(path: Path, durability: str, flows: int) -> tuple[float, float, RecordingStore]:
    """Wall and CPU seconds of ``flows`` chains on a store of ``durability``.

    The Flows are started first (each start is acknowledged to the client, so in ``group`` mode
    it waits for its fsync); the time measured is the engine running the chains' Steps.
    """
    store = RecordingStore(path, durability=durability)
    flow = _flows.Chain()
    engine = dexviz.Engine([flow], seed=1, store=store)
    client = engine.client()
    for i in range(flows):
        client.start_flow(flow, f"chain-{i}", 0)
    store.log.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    engine.run_until_idle()
    return time.perf_counter() - wall, time.process_time() - cpu, store


def sql_replay(path: Path, durability: str, log: list[list[tuple[str, Sequence[Event]]]]) -> float:
    """Wall seconds to write the same rows, one transaction per commit, with plain sqlite3."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
    db.executescript(f"{SCHEMA} PRAGMA user_version={SCHEMA_VERSION};")
    flows: dict[str, int] = {}
    runs: dict[str, tuple[int, int]] = {}
    prepared: list[list[tuple[Any, ...]]] = []
    for commits in log:
        rows = []
        for flow_id, events in commits:
            flow = flows.setdefault(flow_id, len(flows) + 1)
            for event in events:
                run, t0 = runs.setdefault(event.run_id, (len(runs) + 1, event.time_ns))
                rows.append((flow, (event.run_id, t0), encode(event, run, t0)))
        prepared.append(rows)
    insert = "INSERT INTO events (run, seq, t, kind, ex, step, method, attempt, body) VALUES "
    insert += "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
    known_flows: set[int] = set()
    known_runs: set[int] = set()
    start = time.perf_counter()
    for rows in prepared:
        db.execute("BEGIN IMMEDIATE")
        for flow, (run_id, t0), row in rows:
            if flow not in known_flows:
                known_flows.add(flow)
                db.execute("INSERT INTO flows VALUES (?, ?)", (flow, f"chain-{flow}"))
            if row[0] not in known_runs:
                known_runs.add(row[0])
                db.execute("INSERT INTO runs VALUES (?, ?, ?, ?)", (row[0], flow, run_id, t0))
        db.executemany(insert, [row for _, _, row in rows])
        db.execute("COMMIT")  # group mode's reference is NORMAL: its fsyncs are off-thread
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def bytes_per_step(path: Path, steps: int) -> float:
    """Database size after a checkpoint, minus an empty database, per step."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    used = db.execute("PRAGMA page_count").fetchone()[0] * page
    free = db.execute("PRAGMA freelist_count").fetchone()[0] * page
    db.close()
    empty = 6 * page  # the schema: page 1, four tables and an index, one page each
    return (used - free - empty) / steps


def fsync_latency_us(folder: Path, samples: int = 200) -> float:
    """Median µs of one small write plus fdatasync on this disk."""
    fsync = getattr(os, "fdatasync", os.fsync)
    fd = os.open(folder / "fsync.probe", os.O_RDWR | os.O_CREAT, 0o644)
    times = []
    for i in range(samples):
        os.pwrite(fd, b"x" * 512, (i % 8) * 4096)
        start = time.perf_counter()
        fsync(fd)
        times.append(time.perf_counter() - start)
    os.close(fd)
    return statistics.median(times) * 1e6


def recovery_ms_per_flow(folder: Path, flows: int) -> float:
    """Milliseconds per open Flow to open a database of ``flows`` waiting Flows and resume them."""
    path = folder / f"open-{time.time_ns()}.db"
    flow = _flows.Idle()  # one Step parked on a Channel
    engine = dexviz.Engine([flow], store=dexviz.SQLiteStore(path, durability="normal"))
    client = engine.client()
    for i in range(flows):
        client.start_flow(flow, f"parked-{i}", i)
    engine.run_until_idle()
    engine.close()
    start = time.perf_counter()
    resumed = dexviz.Engine([flow], store=dexviz.SQLiteStore(path, durability="normal"))
    elapsed = time.perf_counter() - start
    assert len(resumed.recovered.open_runs) == flows
    resumed.close()
    return elapsed / flows * 1e3


def measure(folder: Path, durability: str, flows: int) -> dict[str, float]:
    """One run of one mode: engine steps/s, reference steps/s, bytes per step."""
    steps = flows * _flows.CHAIN_LENGTH
    tag = f"{durability}-{time.time_ns()}"
    wall, cpu, store = engine_run(folder / f"{tag}.db", durability, flows)
    store.close()
    reference = sql_replay(folder / f"{tag}-ref.db", durability, store.log)
    return {
        "steps_s": steps / wall,
        "cpu_us": cpu / steps * 1e6,
        "reference_steps_s": steps / reference,
        "bytes": bytes_per_step(folder / f"{tag}.db", steps),
    }


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the median over the runs."""
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def collect(flows: int, runs: int, open_flows: int) -> dict[str, dict[str, float]]:
    """Every metric, medians over ``runs`` (modes interleaved); FULL runs a fifth of the Flows."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        samples: dict[str, list[dict[str, float]]] = {"normal": [], "group": [], "full": []}
        for _ in range(runs):
            for mode in samples:
                count = max(10, flows // 5) if mode == "full" else flows
                samples[mode].append(measure(folder, mode, count))
        results = {mode: median_of(found) for mode, found in samples.items()}
        results["disk"] = {"fsync_us": fsync_latency_us(folder)}
        results["recovery"] = {
            "ms_per_flow": statistics.median(
                recovery_ms_per_flow(folder, open_flows) for _ in range(runs)
            )
        }
    return results


def table(results: dict[str, dict[str, float]]) -> list[tuple[str, float, str, bool]]:
    """(metric, value, goal, met) rows."""
    normal, group, full = results["normal"], results["group"], results["full"]
    fsync = results["disk"]["fsync_us"]
    return [
        ("NORMAL steps/s", normal["steps_s"], f"ref {normal['reference_steps_s']:,.0f}", True),
        ("NORMAL / reference", normal["steps_s"] / normal["reference_steps_s"], ">= 0.8",
         normal["steps_s"] / normal["reference_steps_s"] >= 0.8),
        ("group steps/s", group["steps_s"], "", True),
        ("group / NORMAL", group["steps_s"] / normal["steps_s"], ">= 0.9",
         group["steps_s"] / normal["steps_s"] >= 0.9),
        ("FULL steps/s", full["steps_s"], f"ref {full['reference_steps_s']:,.0f}", True),
        ("FULL / reference", full["steps_s"] / full["reference_steps_s"],
         f">= 0.8 (fsync {fsync:,.0f} us)", full["steps_s"] / full["reference_steps_s"] >= 0.8),
        ("engine CPU per step, NORMAL, us", normal["cpu_us"], "", True),
        ("database bytes per step", normal["bytes"], "<= 300 B", normal["bytes"] <= 300),
        ("recovery per open Flow, ms", results["recovery"]["ms_per_flow"], "<= 1 ms",
         results["recovery"]["ms_per_flow"] <= 1),
    ]  # fmt: skip


def main() -> int:
    """Measure, print the table, exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--open", type=int, default=1000, help="open Flows for the recovery case")
    args = parser.parse_args()
    rows = table(collect(args.flows, args.runs, args.open))
    for metric, value, goal, met in rows:
        print(f"{metric:34s} {value:12,.2f}  {goal:28s} {'met' if met else 'MISSED'}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0 if all(met for *_, met in rows) else 1


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


if __name__ == "__main__":
    raise SystemExit(main())
