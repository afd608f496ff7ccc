"""The lineage graph records: nodes, edges, the graph of one run, and per Step type statistics.

:mod:`dexviz.analysis.lineage` builds them from a run's execution records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dexviz.analysis.execution_records import ExecutionStatus

__all__ = [
    "STATUS_ORDER",
    "LineageEdge",
    "LineageGraph",
    "LineageNode",
    "StepTypeStats",
    "group_status",
]

STATUS_ORDER: tuple[ExecutionStatus, ...] = (
    ExecutionStatus.ACTIVE,
    ExecutionStatus.PENDING,
    ExecutionStatus.WAITING,
    ExecutionStatus.FAILED,
    ExecutionStatus.CANCELED,
    ExecutionStatus.COMPLETED,
)
"""Statuses by precedence: a collapsed node shows the first one any member has."""


def group_status(statuses: Iterable[str]) -> str:
    """The status a collapsed node shows: the highest-precedence status among its members.

    Examples:
        >>> group_status(["Completed", "Failed", "Completed"])
        'Failed'
    """
    present = set(statuses)
    return next((str(s) for s in STATUS_ORDER if s in present), str(ExecutionStatus.COMPLETED))


@dataclass(frozen=True)
class LineageNode:
    """A node of the lineage graph.

    Attributes:
        node_id: The execution id; ``__start__``, ``__rpc/<name>``, ``__client__`` or
            ``__timeout_handler__`` for sources; ``__end__`` for the Flow end; ``group:<first
            member>`` for collapsed siblings.
        kind: ``"source"``, ``"step"``, ``"group"`` or ``"end"``.
        label: What the node's header says (a Step type, "Flow start", "RPC · name", ...).
        status: An ExecutionStatus value, ``"Source"``, or the close status for the end node.
        execution_ids: The executions the node stands for (one, or a group's members).
        statuses: For groups, ``(status, count)`` pairs in STATUS_ORDER.
        detail: Extra lines: outcome, wait, error, close reason.
        has_wait_for: Whether the Step has a WaitFor (Dex Web draws its section).
    """

    node_id: str
    kind: str
    label: str
    status: str
    execution_ids: tuple[str, ...] = ()
    statuses: tuple[tuple[str, int], ...] = ()
    detail: tuple[str, ...] = ()
    has_wait_for: bool = False

    @property
    def count(self) -> int:
        """How many executions the node stands for."""
        return len(self.execution_ids)


@dataclass(frozen=True)
class LineageEdge:
    """An edge of the lineage graph, of one of four kinds.

    ``lineage`` (created by), ``recovery`` (Execute failure route), ``message`` (publish ->
    consume, ``label`` is the Channel) or ``close`` (the decision that closed the Flow).
    ``count`` is how many execution-level edges it stands for.
    """

    source: str
    target: str
    kind: str
    label: str = ""
    count: int = 1


@dataclass(frozen=True)
class LineageGraph:
    """The lineage graph of one run: nodes in a stable order, then edges in event order."""

    flow_id: str
    flow_type: str
    run_id: str
    nodes: tuple[LineageNode, ...]
    edges: tuple[LineageEdge, ...]
    close_status: str | None

    def node(self, node_id: str) -> LineageNode:
        """The node with ``node_id``.

        Raises:
            KeyError: no such node (the message lists a few that exist).
        """
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        known = ", ".join(n.node_id for n in self.nodes[:8])
        raise KeyError(f"no node {node_id!r} in the lineage graph (nodes include: {known})")

    def node_of(self, execution_id: str) -> LineageNode:
        """The node that stands for ``execution_id`` (itself, or its collapsed group)."""
        for node in self.nodes:
            if execution_id in node.execution_ids:
                return node
        raise KeyError(f"execution {execution_id!r} is not in the lineage graph")

    def edges_of(self, kind: str) -> tuple[LineageEdge, ...]:
        """The edges of one kind."""
        return tuple(e for e in self.edges if e.kind == kind)

    def status_counts(self) -> Mapping[str, int]:
        """How many executions have each status (collapsed members counted one by one)."""
        counts: Counter[str] = Counter()
        for node in self.nodes:
            if node.kind == "group":
                counts.update(dict(node.statuses))
            elif node.kind == "step":
                counts[node.status] += 1
        return dict(counts)

    def __repr__(self) -> str:
        return (f"LineageGraph(flow_type={self.flow_type!r}, run_id={self.run_id!r}, "
                f"nodes={len(self.nodes)}, edges={len(self.edges)}, "
                f"close_status={self.close_status!r})")


@dataclass(frozen=True)
class StepTypeStats:
    """What one Step type's executions did in a run (for overlays on the definition graph).

    Attributes:
        step_type: The Step type.
        count: How many executions it had.
        statuses: ``(status, count)`` pairs in STATUS_ORDER.
        status: The precedence status of :func:`group_status`.
        attempts: Method attempts over all its executions.
        failed_attempts: How many of those failed.
        execute_s: Seconds spent in Execute attempts, summed.
    """

    step_type: str
    count: int
    statuses: tuple[tuple[str, int], ...]
    status: str
    attempts: int
    failed_attempts: int
    execute_s: float
