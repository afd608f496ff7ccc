"""The liveness state graph: states up to numbering and time shifts, and fair components."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dexviz.engine.engine import Engine
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.examples.livelock_rally import RallyFlow
from dexviz.explore.fairness import components, is_fair, loop_through, unfair_options
from dexviz.explore.live_state import live_key
from dexviz.explore.state_graph import Edge, Node


def _key_after(flow: Any, input: Any, steps: int, epoch: datetime | None = None) -> str | None:
    with Engine(flow, epoch=epoch) as engine:
        engine.client().start_flow(flow, "flow-1", input)
        for _ in range(steps):
            engine.step()
        return live_key(engine._rt)


def test_a_shift_in_virtual_time_is_the_same_state() -> None:
    later = datetime(2030, 6, 1, tzinfo=UTC)
    assert _key_after(RallyFlow(), 0, 5) == _key_after(RallyFlow(), 0, 5, epoch=later)


def test_a_state_that_differs_in_an_input_is_another_state() -> None:
    assert _key_after(RallyFlow(), 0, 5) != _key_after(RallyFlow(), 1, 5)


def test_a_round_of_the_rally_comes_back_to_the_same_state_under_new_numbers() -> None:
    # Six steps are one round: Ping-1 -> Pong-1 -> Ping-2 at +2 s, with new execution ids.
    assert _key_after(RallyFlow(), 0, 4) == _key_after(RallyFlow(), 0, 10)
    assert _key_after(RallyFlow(), 0, 4) != _key_after(RallyFlow(), 0, 7)


def test_a_state_with_a_coroutine_handler_in_flight_has_no_key() -> None:
    flow = ContractEditFlow()
    with Engine(flow) as engine:
        engine.client().start_flow(flow, "flow-1", sample_edits(1))
        keys = []
        while not engine.is_idle:
            engine.step()
            keys.append(live_key(engine._rt))
    assert None in keys  # EditContract awaits asyncio.sleep: its frame cannot be described
    assert keys[-1] is not None


def _graph(edges: dict[int, list[tuple[int, str]]], enabled: dict[int, set[str]]) -> list[Node]:
    nodes = []
    for index in sorted(enabled):
        node = Node(index, f"k{index}", None, (False,), "RUNNING", index)  # type: ignore[arg-type]
        node.enabled = frozenset((o,) for o in enabled[index])
        node.edges = [Edge(t, (o,), o, ()) for t, o in edges.get(index, [])]
        node.expanded = True
        nodes.append(node)
    return nodes


def test_a_component_that_never_takes_an_always_ready_option_is_unfair() -> None:
    # 0 <-> 1 by "spin"; "stop" is ready in both states and never taken on the cycle.
    nodes = _graph({0: [(1, "spin"), (2, "stop")], 1: [(0, "spin"), (2, "stop")]},
                   {0: {"spin", "stop"}, 1: {"spin", "stop"}, 2: set()})  # fmt: skip
    (component,) = components(nodes, lambda n: n.index != 2)
    assert component == [0, 1]
    assert not is_fair(nodes, component)
    assert unfair_options(nodes, component) == [("stop",)]


def test_a_fair_loop_visits_enough_states_to_be_fair_by_itself() -> None:
    # The self-loop "p" alone starves "q" (ready in state 0); the component {0, 1} is fair
    # because "q" is taken on it: the loop must take q too.
    nodes = _graph({0: [(0, "p"), (1, "q")], 1: [(0, "r")]}, {0: {"p", "q"}, 1: {"r"}})
    (component,) = components(nodes, lambda n: True)
    assert is_fair(nodes, component)
    loop = loop_through(nodes, component, 0)
    assert [e.option for e in loop] == [("p",), ("q",), ("r",)]
    assert loop[-1].target == 0


def test_components_without_a_cycle_are_left_out() -> None:
    nodes = _graph({0: [(1, "a")], 1: [(2, "b")]}, {0: {"a"}, 1: {"b"}, 2: set()})
    assert components(nodes, lambda n: True) == []
