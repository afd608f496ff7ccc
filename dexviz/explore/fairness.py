"""Fair cycles: the strongly connected components of a state graph a fair run can stay in.

Weak fairness, as model checkers check it: a run that stays in a component forever is fair
when every option enabled in *all* of the component's states (a ready unit, a client action)
is taken on some edge inside it. For weak fairness that test on the whole component is exact:
a cycle inside it has at least those options enabled throughout and takes at most its edges,
so if the component is unfair, so is every cycle in it; if it is fair, a closed walk over all
its edges is a fair cycle. ``loop_through`` builds a shorter walk that is fair by itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from dexviz.explore.state_graph import Edge, Node

__all__ = ["components", "is_fair", "loop_through", "unfair_options"]


def components(nodes: Sequence[Node], inside: Callable[[Node], bool]) -> list[list[int]]:
    """Tarjan's SCCs of the subgraph of nodes ``inside`` says belong (iteratively).

    Components come in reverse topological order; only those with a cycle are returned
    (more than one node, or a node with an edge to itself).
    """
    tarjan = _Tarjan(nodes, inside)
    for root in range(len(nodes)):
        if root not in tarjan.number and inside(nodes[root]):
            tarjan.visit(root)
    return tarjan.found


class _Tarjan:
    """Tarjan's algorithm with an explicit stack (state graphs are deep)."""

    def __init__(self, nodes: Sequence[Node], inside: Callable[[Node], bool]) -> None:
        self.nodes, self.inside = nodes, inside
        self.number: dict[int, int] = {}
        self.low: dict[int, int] = {}
        self.on_stack: set[int] = set()
        self.stack: list[int] = []
        self.found: list[list[int]] = []

    def visit(self, root: int) -> None:
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            index, position = work.pop()
            if position == 0:
                self.number[index] = self.low[index] = len(self.number)
                self.stack.append(index)
                self.on_stack.add(index)
            child = self._next_child(index, position)
            if child is not None:
                work.append((index, child[1]))
                work.append((child[0], 0))
                continue
            self._finish(index)
            if work:
                parent = work[-1][0]
                self.low[parent] = min(self.low[parent], self.low[index])

    def _next_child(self, index: int, position: int) -> tuple[int, int] | None:
        """The next unvisited successor and where to resume; None when all are seen."""
        edges = self.nodes[index].edges
        while position < len(edges):
            target = edges[position].target
            position += 1
            if not self.inside(self.nodes[target]):
                continue
            if target not in self.number:
                return target, position
            if target in self.on_stack:
                self.low[index] = min(self.low[index], self.number[target])
        return None

    def _finish(self, index: int) -> None:
        if self.low[index] != self.number[index]:
            return
        component = _pop(self.stack, self.on_stack, index)
        if len(component) > 1 or any(e.target == index for e in self.nodes[index].edges):
            self.found.append(sorted(component))


def _pop(stack: list[int], on_stack: set[int], index: int) -> list[int]:
    component: list[int] = []
    while True:
        item = stack.pop()
        on_stack.discard(item)
        component.append(item)
        if item == index:
            return component


def _internal(nodes: Sequence[Node], component: set[int]) -> list[Edge]:
    return [e for i in sorted(component) for e in nodes[i].edges if e.target in component]


def unfair_options(nodes: Sequence[Node], component: Sequence[int]) -> list[tuple[Any, ...]]:
    """The options enabled in every state of the component but never taken inside it.

    A state whose options cannot be described (a coroutine in flight) adds no constraint.
    """
    members = set(component)
    described = [e for e in (nodes[i].enabled for i in component) if e is not None]
    if not described:
        return []
    always = frozenset.intersection(*described)
    taken = {e.option for e in _internal(nodes, members)}
    return sorted((o for o in always if o not in taken), key=repr)


def is_fair(nodes: Sequence[Node], component: Sequence[int]) -> bool:
    """Whether a weakly fair run can stay in the component forever."""
    return not unfair_options(nodes, component)


def loop_through(nodes: Sequence[Node], component: Sequence[int], start: int) -> list[Edge]:
    """A closed walk from ``start`` inside a fair component that is fair by itself.

    Each option enabled in every state the walk visits is taken on it: while one is not, the
    walk goes on to an edge that takes it or, when the component has none, to a state where
    it is not enabled. Options only leave that set and only join the taken ones, so this ends.
    """
    members = set(component)
    walk: list[Edge] = []
    current = start
    while True:
        missing = _missing(nodes, {start} | {e.target for e in walk}, walk)
        if not missing:
            break
        route = _route(nodes, members, current, _towards(nodes, members, missing[0]))
        walk.extend(route)
        current = route[-1].target
    walk.extend(_route(nodes, members, current, lambda e: e.target == start))
    return walk


def _missing(nodes: Sequence[Node], visited: set[int], walk: list[Edge]) -> list[tuple[Any, ...]]:
    described = [e for e in (nodes[i].enabled for i in sorted(visited)) if e is not None]
    if not described:
        return []
    taken = {e.option for e in walk}
    return sorted((o for o in frozenset.intersection(*described) if o not in taken), key=repr)


def _towards(
    nodes: Sequence[Node], members: set[int], option: tuple[Any, ...]
) -> Callable[[Edge], bool]:
    """The edges a walk missing ``option`` goes to: one taking it, else one disabling it."""
    if any(e.option == option for e in _internal(nodes, members)):
        return lambda edge: edge.option == option

    def disables(edge: Edge) -> bool:
        enabled = nodes[edge.target].enabled
        return enabled is not None and option not in enabled

    return disables


def _route(
    nodes: Sequence[Node], members: set[int], start: int, wanted: Callable[[Edge], bool]
) -> list[Edge]:
    """The fewest edges inside ``members`` from ``start`` whose last edge is ``wanted``."""
    came: dict[int, tuple[int, Edge] | None] = {start: None}
    queue = deque([start])
    while queue:
        index = queue.popleft()
        for edge in nodes[index].edges:
            if edge.target not in members:
                continue
            if wanted(edge):
                return [*_back(came, index), edge]
            if edge.target not in came:
                came[edge.target] = (index, edge)
                queue.append(edge.target)
    raise ValueError("no such edge in the component (it is not strongly connected)")


def _back(came: dict[int, tuple[int, Edge] | None], index: int) -> list[Edge]:
    edges: list[Edge] = []
    step = came[index]
    while step is not None:
        edges.append(step[1])
        step = came[step[0]]
    return edges[::-1]
