"""One schedule's engine: closed when the schedule ends, or kept for a replay and then dropped.

The handlers of the contract-edit Flows are coroutines, so a schedule cut short (here by the
depth bound) leaves their Tasks pending; nothing of them may warn later.
"""

from __future__ import annotations

import gc
import weakref

import pytest

from dexviz.engine.engine import as_registry
from dexviz.examples.contract_edit import ContractEdit
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import checks, explore
from dexviz.explore.schedule_records import Setup
from dexviz.explore.violation import replay
from tests.engine.leftovers import nothing_left

TOKEN = "contractEditToken"
EDITS = [ContractEdit("r1"), ContractEdit("r2")]


def _setup(max_depth: int) -> Setup:
    flow = BrokenContractEditFlow()
    check = (checks.exclusive(TOKEN),)
    return Setup(as_registry(flow), flow, EDITS, "flow-1", check, (), None, max_depth, False)


@pytest.mark.parametrize("max_depth", [6, 7, 8])
def test_a_schedule_cut_short_closes_its_engine_and_cancels_the_pending_tasks(
    max_depth: int,
) -> None:
    with nothing_left() as left:
        kept = replay(_setup(max_depth), (), keep_engine=True)
        assert kept.outcome == "depth" and kept.engine is not None
        assert kept.engine._rt.loop.pending_tasks()  # what the closed schedule cancels
        kept.engine.close()
        result = replay(_setup(max_depth), ())
        assert result.outcome == "depth" and result.engine is None
        assert [s.state for s in result.steps] == [s.state for s in kept.steps]
        del kept, result
    assert left == []


def test_a_kept_engine_with_pending_tasks_is_collected_quietly_once_dropped() -> None:
    with nothing_left() as left:
        result = replay(_setup(8), (), keep_engine=True)
        engine = result.engine
        assert engine is not None and not engine.closed
        assert engine._rt.loop.pending_tasks()
        dropped = weakref.ref(engine)
        del result, engine
        gc.collect()
        assert dropped() is None
    assert left == []


def test_exploring_coroutine_handlers_leaves_nothing_to_warn() -> None:
    with nothing_left() as left:
        report = explore(
            BrokenContractEditFlow(),
            EDITS,
            check=[checks.exclusive(TOKEN), checks.conserved(TOKEN), checks.terminates()],
            max_depth=9,
            progress=False,
        )
        assert report.schedules > 1
        replayed = [v.replay() for v in report.violations]
        del report, replayed
    assert left == []
