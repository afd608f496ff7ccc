"""WaiterSet keeps the same order of waiters whether or not its position index exists (R46)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dexviz.engine.commit.decide import DEFAULT_OPTIONS
from dexviz.engine.core.state import Execution
from dexviz.engine.core.waiters import WaiterSet


def _model(ops: list[tuple[bool, int]]) -> list[int]:
    """The swap-remove list every WaiterSet must match, with an always-present index."""
    items: list[int] = []
    positions: dict[int, int] = {}
    for add, n in ops:
        if add and n not in positions:
            positions[n] = len(items)
            items.append(n)
        elif not add and n in positions:
            position = positions.pop(n)
            last = items.pop()
            if position < len(items):
                items[position] = last
                positions[last] = position
    return items


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30)), max_size=200))
def test_order_matches_the_indexed_swap_remove_list(ops: list[tuple[bool, int]]) -> None:
    executions = {
        n: Execution(f"S-{n}", None, None, "", DEFAULT_OPTIONS)  # type: ignore[arg-type]
        for n in range(31)
    }
    waiters = WaiterSet()
    for add, n in ops:
        (waiters.add if add else waiters.discard)(executions[n])
    assert [int(e.execution_id[2:]) for e in waiters.items] == _model(ops)
    assert len(waiters) == len(_model(ops))
