"""The reachable state graph of one Flow run, built breadth first from snapshots (for liveness).

Each state is expanded once (``explore.state_driver``) and its successors are keyed by their
liveness state (``explore.live_state``: up to execution numbering and a shift in virtual
time), so a Flow that loops forever has a finite graph. Each node keeps the first way in that
was found (its parent and the edge from it), so a path from the start is a concrete trace.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dexviz.explore.schedule_records import ChoiceRecord
from dexviz.explore.state_driver import Driver, Point, Transition

__all__ = ["MAX_UNKEYED_STEPS", "Edge", "Node", "StateGraphSearch"]


@dataclass(frozen=True)
class Edge:
    """A transition of the graph: to which node, taking which option, with which choices."""

    target: int
    option: tuple[Any, ...] | None
    label: str
    choices: tuple[ChoiceRecord, ...]


@dataclass
class Node:
    """A state of the graph, with its first-found way in (``parent``, ``via``)."""

    index: int
    key: str | None
    point: Point
    goals: tuple[bool, ...]
    status: str
    depth: int
    parent: int | None = None
    via: Edge | None = None
    enabled: frozenset[tuple[Any, ...]] | None = None
    edges: list[Edge] = field(default_factory=list)
    expanded: bool = False
    terminal: bool = False


MAX_UNKEYED_STEPS = 200
"""Steps a state may lie past the last one that had a key: each of its expansions re-runs them,
so a coroutine handler that never finishes would make the search quadratic, never ending."""


@dataclass
class StateGraphSearch:
    """Breadth-first construction of the graph, up to ``max_states`` states.

    A state where every goal holds is not expanded (what happens after it cannot violate).
    ``bounded`` says whether some state was left out because of a bound (``max_states``, or
    more than ``MAX_UNKEYED_STEPS`` steps without a key).
    """

    driver: Driver
    max_states: int
    nodes: list[Node] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    transitions: int = 0
    bound: str | None = None
    """Which bound left states out, as the verdict says it; None when none did."""

    @property
    def bounded(self) -> bool:
        """Whether some state was left out because of a bound."""
        return self.bound is not None

    def run(self, tick: Callable[[StateGraphSearch], None] | None = None) -> None:
        """Build the graph from the start state."""
        self.driver.known = self.index.__contains__
        start = self.driver.start()
        queue = deque([self._add(start, 0, None, None)])
        while queue:
            node = self.nodes[queue.popleft()]
            if all(node.goals):
                continue
            enabled, transitions = self.driver.expand(node.point)
            node.enabled, node.expanded, node.terminal = enabled, True, not transitions
            for transition in transitions:
                self.transitions += 1
                target = self.index.get(transition.key) if transition.key is not None else None
                edge = Edge(-1, transition.option, transition.label, transition.choices)
                if target is None:
                    if len(transition.point.path) > MAX_UNKEYED_STEPS:
                        self.bound = self.bound or (
                            f"{MAX_UNKEYED_STEPS} steps in a row without a state it can key: "
                            "a coroutine handler that never returns?")  # fmt: skip
                        continue
                    if len(self.nodes) >= self.max_states:
                        self.bound = f"{self.max_states} states"
                        continue
                    target = self._add(transition, node.depth + 1, node.index, edge)
                    queue.append(target)
                node.edges.append(Edge(target, edge.option, edge.label, edge.choices))
            if tick is not None:
                tick(self)

    def _add(self, transition: Transition, depth: int, parent: int | None, via: Edge | None) -> int:
        index = len(self.nodes)
        if via is not None:
            via = Edge(index, via.option, via.label, via.choices)
        self.nodes.append(Node(index, transition.key, transition.point, transition.goals,
                               transition.status, depth, parent, via))  # fmt: skip
        if transition.key is not None:
            self.index[transition.key] = index
        return index

    def path_to(self, index: int) -> list[Edge]:
        """The first-found edges from the start state to node ``index``."""
        edges: list[Edge] = []
        node = self.nodes[index]
        while node.parent is not None and node.via is not None:
            edges.append(node.via)
            node = self.nodes[node.parent]
        return edges[::-1]
