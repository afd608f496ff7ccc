"""``InvocationContext.first_attempt`` is ``InvocationContext(...)`` for attempt 1, slot for slot.

The fast path builds each attempt's context with it; the general path calls the constructor.
Both must give handlers the same context (R21, R22), so every slot must match.
"""

from __future__ import annotations

from typing import Any

from dexviz import Engine
from dexviz.engine.core.context import InvocationContext
from tests.engine.test_fast_path import _flows


def _slots(ctx: InvocationContext) -> dict[str, Any]:
    names = [n for cls in type(ctx).__mro__ for n in getattr(cls, "__slots__", ())]
    return {name: getattr(ctx, name) for name in names}


def test_first_attempt_sets_every_slot_init_sets() -> None:
    flow, value = next(iter(_flows().values()))
    engine = Engine([flow], seed=1)
    engine.client().start_flow(flow, "f", value)
    rt = engine._rt
    run = rt.runs["f"]
    ex = next(iter(run.executions.values()))
    snapshot = {"a": 1}
    made = InvocationContext(
        run, ex, "execute", 1, snapshot, rt.codecs, runtime=rt, subflows=rt.subflows
    )
    fast = InvocationContext.first_attempt(run, ex, "execute", snapshot, rt)
    assert _slots(fast) == _slots(made)
    assert repr(fast) == repr(made)
