"""explore.caches: nothing of a finished stateful search stays alive in the caches."""

from __future__ import annotations

import gc

import pytest

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow, SaveContractEdit
from dexviz.explore import canonical, explore, state_key
from dexviz.explore.caches import CACHES, release_caches
from tests.explore.test_stateful import TOKEN_CHECKS


def _engine_objects() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, (FlowRun, Execution))}


def _search(workers: int = 1):  # type: ignore[no-untyped-def]
    return explore(
        ContractEditFlow(),
        [ContractEdit(r) for r in "ab"],
        check=TOKEN_CHECKS,
        faults=FaultBudget.of(SaveContractEdit),
        strategy="stateful",
        progress=False,
        workers=workers,
    )


def test_the_caches_are_empty_after_a_stateful_search() -> None:
    report = _search()
    assert report.proven and report.distinct_states > 10
    assert all(not cache for cache in CACHES)
    assert canonical.LIVE.memo is None
    assert not state_key._DIGESTS._found


def test_no_run_or_execution_of_a_finished_search_stays_alive() -> None:
    before = _engine_objects()
    report = _search()
    assert report.proven
    assert _engine_objects() <= before


def test_the_caches_fill_during_a_search_and_releasing_twice_is_harmless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without the release the search leaves its snapshots in the caches: the tests above
    # test something.
    from dexviz.explore import run_stateful

    monkeypatch.setattr(run_stateful, "release_caches", lambda: None)
    before = _engine_objects()
    _search()
    assert any(CACHES) and not _engine_objects() <= before
    release_caches()
    release_caches()
    assert _engine_objects() <= before and not any(CACHES)
