"""Benchmark: the views of a large run — a ~50 MB history — load and render.

Run: ``.venv/bin/python benchmarks/large_views.py [--reviewers 6500] [--out DIR]``

Simulates the contract-edit seed with ``--reviewers`` edits (6,500 give a history of about
50 MB), saves it, then times what ``dexviz history FILE --out DIR --channel contractEditToken``
does: load the file (every line checked), then write the lineage graph (Graphviz), the
timeline, the executions table and the exclusive-sections report. It prints wall and CPU time
for each phase and exits 1 when a phase fails or a DOT string reaches Graphviz's 16,384
character limit. There is no time goal: on a shared 2-core machine the point is that every
view renders, and how the cost splits between the phases.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from dexviz import History, simulate  # noqa: E402
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits  # noqa: E402
from dexviz.viz.execution_view import execution_graph  # noqa: E402
from dexviz.viz.run_outputs import write_run_outputs  # noqa: E402

GRAPHVIZ_LIMIT = 16_384
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|<(?:[^<>]|<[^<>]*>)*>', re.S)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(name: str, work: Callable[[], Any]) -> Any:
    wall, cpu = time.perf_counter(), _cpu()
    result = work()
    print(f"{name:<28} {time.perf_counter() - wall:8.2f} s wall {_cpu() - cpu:8.2f} s cpu")
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 1 when a view fails or a DOT string is too long for Graphviz."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=6500)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="dexviz-large-"))
    out.mkdir(parents=True, exist_ok=True)
    run = _timed("simulate", lambda: simulate(ContractEditFlow(), sample_edits(args.reviewers)))
    path = _timed("save", lambda: run.history.save(out / "saved.jsonl"))
    print(f"history: {path.stat().st_size / 1e6:.1f} MB, {len(run.history):,} events")
    history = _timed("load (checked)", lambda: History.load(path))
    if history != run.history:
        print("FAILED: the loaded history differs from the saved one")
        return 1
    dot = _timed("lineage DOT text", lambda: execution_graph(history).to_dot())
    longest = max((len(m.group(0)) for m in _TOKEN.finditer(dot)), default=0)
    print(f"longest DOT string: {longest:,} characters")
    written = _timed("write every view", lambda: write_run_outputs(
        history, out / "views", channel="contractEditToken"))
    for name, file in written.items():
        print(f"  {name:<12} {file.stat().st_size / 1e6:8.1f} MB  {file}")
    return 0 if longest < GRAPHVIZ_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
