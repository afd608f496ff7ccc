"""The collector pause shared by the engine's tools: off inside, restored after (even on error), and
what a large batch leaves behind promoted to the oldest generation within a budget."""

import gc

import pytest

from dexviz.history import collector
from dexviz.history.collector import collector_paused, promote_survivors


def test_the_collector_is_off_inside_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_the_collector_back_on():
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("boom")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def _lasting(count: int) -> list[list[int]]:
    return [[i] for i in range(count)]


def test_a_large_batch_left_by_a_pause_goes_to_the_oldest_generation():
    gc.collect()
    with collector_paused():
        kept = _lasting(collector.PROMOTE_AT_LEAST * 2)
    assert gc.get_count()[0] < collector.PROMOTE_AT_LEAST
    assert gc.is_tracked(kept[0])
    assert any(o is kept for o in gc.get_objects(generation=2))


def test_a_small_batch_stays_young():
    gc.collect()
    with collector_paused():
        kept = _lasting(100)
    assert not any(o is kept for o in gc.get_objects(generation=2))


def test_a_batch_beyond_the_budget_runs_the_full_collection_it_held_back(monkeypatch):
    monkeypatch.setattr(collector, "PROMOTION_BUDGET", collector.PROMOTE_AT_LEAST * 3)
    gc.collect()
    full_passes = gc.get_stats()[-1]["collections"]
    gc.disable()
    try:
        batches = [_lasting(collector.PROMOTE_AT_LEAST * 2)]
        assert promote_survivors()
        assert gc.get_stats()[-1]["collections"] == full_passes
        batches.append(_lasting(collector.PROMOTE_AT_LEAST * 2))
        assert not promote_survivors()
        assert gc.get_stats()[-1]["collections"] == full_passes + 1
        batches.append(_lasting(collector.PROMOTE_AT_LEAST * 2))
        assert promote_survivors()
    finally:
        gc.enable()


def test_a_batch_larger_than_the_budget_is_left_to_the_young_passes(monkeypatch):
    monkeypatch.setattr(collector, "PROMOTION_BUDGET", collector.PROMOTE_AT_LEAST * 2)
    gc.collect()
    gc.disable()
    try:
        _kept = _lasting(collector.PROMOTE_AT_LEAST * 3)
        assert not promote_survivors()
        assert gc.get_count()[0] >= collector.PROMOTE_AT_LEAST * 3
    finally:
        gc.enable()


def test_objects_someone_froze_are_left_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            _kept = _lasting(collector.PROMOTE_AT_LEAST * 2)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_made_inside_a_pause_is_still_collected_by_a_full_pass():
    import weakref

    with collector_paused():
        cycle = _Cycle()
        _kept = _lasting(collector.PROMOTE_AT_LEAST * 2)
    alive = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert alive() is None
