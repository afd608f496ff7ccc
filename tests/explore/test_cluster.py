"""The stateful search on a Dask LocalCluster returns exactly what one process returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dexviz.examples.contract_edit import CONTRACT_EDIT_TOKEN, ContractEdit, ContractEditFlow
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import checks, explore

distributed = pytest.importorskip("distributed")

TOKEN_CHECKS = [checks.exclusive(CONTRACT_EDIT_TOKEN.name),
                checks.conserved(CONTRACT_EDIT_TOKEN.name), checks.terminates()]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes on 127.0.0.1, started and stopped here (no other network)."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
        processes=True,
    )
    connected = distributed.Client(cluster)
    try:
        yield connected
    finally:
        connected.close()
        cluster.close()


def _run(flow: Any, reviewers: str, **options: Any):  # type: ignore[no-untyped-def]
    return explore(flow, [ContractEdit(r) for r in reviewers], check=TOKEN_CHECKS,
                   strategy="stateful", progress=False, max_schedules=5_000, **options)


def test_a_proof_on_the_cluster_equals_the_local_one(client: Any) -> None:
    local = _run(ContractEditFlow(), "abc")
    remote = _run(ContractEditFlow(), "abc", cluster=client)
    assert remote.stateful is not None and remote.stateful.workers == 2
    assert remote.proven
    assert (remote.terminal_states, remote.distinct_states, remote.schedules) == (
        local.terminal_states, local.distinct_states, local.schedules)


def test_a_counterexample_on_the_cluster_equals_the_local_one(client: Any) -> None:
    local = _run(BrokenContractEditFlow(), "abc")
    remote = _run(BrokenContractEditFlow(), "abc", cluster=client)
    assert not local.ok
    assert remote.violations[0].trace == local.violations[0].trace
    assert remote.violations[0].replay().violating_seq is not None


def test_the_cluster_keeps_snapshots_on_the_worker_that_took_them(client: Any) -> None:
    from dexviz.explore.api import _setup
    from dexviz.explore.parallel import DaskExpander
    from dexviz.explore.schedule_records import Resume
    from dexviz.explore.stateful import SnapshotRef, StateHandle

    setup = _setup(ContractEditFlow(), [ContractEdit(r) for r in "abc"], [], (), None, None,
                   None, "flow-1")  # fmt: skip
    expander = DaskExpander(setup, client)
    seen: set[str | None] = set()
    level, named = [StateHandle((), 0)], 0
    try:
        while level:
            expansions = expander.expand_all(level)
            level = []
            for successor in (s for e in expansions for s in e.successors):
                if successor.fingerprint not in seen:
                    seen.add(successor.fingerprint)
                    level.append(successor.handle)
            if named:
                # Once the Dask workers hold the states, only names travel back.
                assert not any(isinstance(h.base, Resume) for h in level)
            refs = [h.base for h in level if isinstance(h.base, SnapshotRef)]
            assert {r.worker for r in refs} <= {0, 1}
            named += len(refs)
    finally:
        expander.close()
    assert named > 0
