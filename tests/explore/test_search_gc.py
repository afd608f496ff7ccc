"""explore.search_gc: the young generation is larger while a search runs, and only then."""

from __future__ import annotations

import gc

import pytest

from dexviz.examples.contract_edit import ContractEditFlow
from dexviz.explore import run_stateful
from dexviz.explore.api import _setup
from dexviz.explore.search_gc import MIDDLE, YOUNG, young_generation
from tests.explore.test_caches import _search


@pytest.fixture
def thresholds():  # type: ignore[no-untyped-def]
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_the_young_threshold_is_raised_inside_and_restored_after(thresholds) -> None:  # type: ignore[no-untyped-def]
    gc.set_threshold(700, 10, 10)
    with young_generation():
        assert gc.get_threshold() == (YOUNG, MIDDLE, 10)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(RuntimeError), young_generation():
        raise RuntimeError
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("given", [(0, 10, 10), (50_000, 100, 5)])
def test_a_higher_threshold_or_a_collector_turned_off_is_left_alone(thresholds, given) -> None:  # type: ignore[no-untyped-def]
    gc.set_threshold(*given)
    with young_generation():
        assert gc.get_threshold() == given
    assert gc.get_threshold() == given


def test_a_stateful_search_runs_with_the_larger_young_generation(thresholds, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gc.set_threshold(700, 10, 10)
    seen = []
    search = run_stateful.search

    def spying(*args):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold())
        return search(*args)

    monkeypatch.setattr(run_stateful, "search", spying)
    assert _search().proven
    assert seen == [(YOUNG, MIDDLE, 10)] and gc.get_threshold() == (700, 10, 10)


def test_a_dask_workers_batch_is_expanded_with_the_larger_young_generation(  # type: ignore[no-untyped-def]
    thresholds, monkeypatch
) -> None:
    # A Dask worker is a process of its own, started before the search: it inherits nothing.
    from dexviz.explore import affine_pool, parallel

    gc.set_threshold(700, 10, 10)
    seen = []
    monkeypatch.setattr(
        affine_pool.HeldExpander, "expand", lambda self, handles: seen.append(gc.get_threshold())
    )
    monkeypatch.setattr(parallel, "_SIDES", {})
    setup = _setup(ContractEditFlow(), [], [], [], None, None, None, "flow-1")
    parallel._expand_on_worker(setup, "token", 0, parallel._packed((None, [])))
    assert seen == [(YOUNG, MIDDLE, 10)] and gc.get_threshold() == (700, 10, 10)
