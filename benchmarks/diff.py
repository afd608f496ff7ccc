"""Benchmark: the run diff and replay_check on the contract-edit seed.

Run: ``.venv/bin/python benchmarks/diff.py [--runs 3] [--stored 1000]``

Goals (issue 24), all CPU time (``time.process_time``), median of ``--runs``:

- ``diff`` of two runs of ~10,000 events (two seeds): ≤ 200 ms to the first divergence, ≤ 1 s
  for the whole diff; linear in events (measured at ~1 k, 10 k, 100 k: the per-event cost at
  100 k within 2× that at 1 k). The first divergence comes out of the whole comparison (one
  fold of each run, the alignment, every pair compared), so both goals are checked against the
  same time.
- ``replay_check`` of a ~10,000-event run against unchanged code: ≤ 1 s.
- ``replay_check_store`` over ``--stored`` stored runs (8 reviewers each): ≤ 5 ms per run.
  Also printed, for reference: what simulating the same runs costs (the replay re-simulates
  each one, so this is its floor), and a store of runs written by one engine running eight
  Flows at once (replayed in their recorded order, not by seed).

``--only replay`` skips the diff rows.

The histories are saved and loaded first (as ``dexviz diff`` reads them), outside the timing.
Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from dexviz import History, simulate  # noqa: E402
from dexviz.analysis.run_diff import compare_runs  # noqa: E402
from dexviz.compare import replay_check, replay_check_store  # noqa: E402
from dexviz.engine import Engine, SQLiteStore  # noqa: E402
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits  # noqa: E402

EVENTS_PER_REVIEWER = 18
"""About how many events one reviewer's edit adds to a contract-edit history."""


def _loaded(reviewers: int, seed: int) -> History:
    run = simulate(ContractEditFlow(), sample_edits(reviewers), seed=seed)
    return History.from_jsonl(run.history.to_jsonl())


def _cpu(work: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _diff_rows(runs: int) -> tuple[list[tuple[int, float]], bool]:
    rows = []
    for target in (1_000, 10_000, 100_000):
        reviewers = max(target // EVENTS_PER_REVIEWER, 1)
        a, b = _loaded(reviewers, 1), _loaded(reviewers, 2)
        seconds = _cpu(lambda a=a, b=b: compare_runs(a, b).first, runs if target < 100_000 else 1)
        rows.append((len(a), seconds))
        print(f"diff  {len(a):>7} events: {seconds * 1e3:8.1f} ms CPU "
              f"({seconds / len(a) * 1e6:.2f} µs/event)")
    ten_k = rows[1][1]
    per_event = [s / n for n, s in rows]
    ok = ten_k <= 0.2 and per_event[2] <= 2 * per_event[0]
    print(f"  goal: 10 k ≤ 200 ms (first) / ≤ 1 s (whole): {ten_k * 1e3:.1f} ms; "
          f"linear: 100 k per event = {per_event[2] / per_event[0]:.2f}× 1 k "
          f"-> {'ok' if ok else 'MISSED'}")
    return rows, ok


def _replay_row(runs: int) -> bool:
    history = _loaded(10_000 // EVENTS_PER_REVIEWER, 1)
    flow = ContractEditFlow()
    seconds = _cpu(lambda: replay_check(history, flow), runs)
    ok = seconds <= 1.0
    print(f"replay_check {len(history)} events: {seconds * 1e3:.1f} ms CPU "
          f"(goal ≤ 1 s) -> {'ok' if ok else 'MISSED'}")
    return ok


def _store_row(stored: int) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.db"
        store = SQLiteStore(path)
        start = time.process_time()
        for seed in range(stored):
            flow_id = f"edit-{seed}"
            run = simulate(ContractEditFlow(), sample_edits(8), seed=seed, flow_id=flow_id)
            store.commit(flow_id, run.history.events)
        simulated = (time.process_time() - start) / stored
        store.close()
        start = time.process_time()
        checked = replay_check_store(path, ContractEditFlow())
        seconds = time.process_time() - start
    per_run = seconds / stored
    ok = per_run <= 0.005 and checked.compatible
    print(f"replay_check_store {stored} runs: {seconds:.2f} s CPU, {per_run * 1e3:.2f} ms/run "
          f"(goal ≤ 5 ms/run; all compatible: {checked.compatible}) -> "
          f"{'ok' if ok else 'MISSED'}")
    print(f"  for reference: simulating and storing the same runs: {simulated * 1e3:.2f} ms/run "
          f"(load average {os.getloadavg()[0]:.2f}: CPU time here moves with it)")
    return ok


def _shared_row(stored: int) -> bool:
    """A store written by one engine running eight Flows at a time: replayed in recorded order."""
    flow = ContractEditFlow()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "shared.db"
        for batch in range(0, stored, 8):
            with Engine(flow, seed=batch, store=SQLiteStore(path)) as engine:
                client = engine.client()
                for number in range(batch, min(batch + 8, stored)):
                    client.start_flow(flow, f"edit-{number}", sample_edits(8))
                engine.run_until_idle()
        start = time.process_time()
        checked = replay_check_store(path, flow)
        seconds = time.process_time() - start
    print(f"replay_check_store of {stored} runs from shared engines: "
          f"{seconds / stored * 1e3:.2f} ms/run CPU; all compatible: {checked.compatible}")
    return checked.compatible


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stored", type=int, default=1000)
    parser.add_argument("--only", choices=("replay",), help="run only the replay rows")
    args = parser.parse_args(argv)
    diff_ok = args.only == "replay" or _diff_rows(args.runs)[1]
    results = [diff_ok, _replay_row(args.runs), _store_row(args.stored),
               _shared_row(args.stored // 4)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
