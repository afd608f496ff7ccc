"""The Flow Definition Graph model: plain frozen values that every output is built from.

The vocabulary follows Dex's FDG 1.0 (``dexcli visualize``): node kinds ``step``, ``wait``,
``decision``, ``channel``, ``attribute``, ``rpc``, ``timeout_handler`` and ``unknown``; edge kinds
``transition``, ``failure_transition``, ``wait_condition``, ``resource_publish``,
``resource_read`` and ``resource_write``. Node ids are ``step:<Type>``,
``wait:<Step>:<line>:<col>``, ``decision:<Owner>:<line>:<col>``, ``channel:<name>``,
``attribute:<name>``, ``rpc:<name>``, ``timeout_handler:<Flow>`` and
``unknown:<Owner>:<line>:<col>``; the same ids appear in the SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DECISION_TYPES",
    "EDGE_KINDS",
    "NODE_KINDS",
    "WAIT_TYPES",
    "Cancellation",
    "DecisionInfo",
    "Diagnostic",
    "Edge",
    "FlowDefinitionGraph",
    "Node",
    "ResourceInfo",
    "Span",
    "WaitCondition",
    "WaitInfo",
]

NodeKind = Literal[
    "step", "wait", "decision", "channel", "attribute", "rpc", "timeout_handler", "unknown"
]
EdgeKind = Literal[
    "transition",
    "failure_transition",
    "wait_condition",
    "resource_publish",
    "resource_read",
    "resource_write",
]
Severity = Literal["error", "warning"]

NODE_KINDS: tuple[str, ...] = (
    "step", "wait", "decision", "channel", "attribute", "rpc", "timeout_handler", "unknown"
)
"""Every node kind, in Dex's FDG 1.0 vocabulary."""

EDGE_KINDS: tuple[str, ...] = (
    "transition",
    "failure_transition",
    "wait_condition",
    "resource_publish",
    "resource_read",
    "resource_write",
)
"""Every edge kind, in Dex's FDG 1.0 vocabulary."""

WAIT_TYPES: tuple[str, ...] = (
    "until", "allOf", "anyOf", "anyComboOf", "skipWaitImmediately", "unknown"
)
"""``wait.type`` values: Dex's five plus ``unknown`` for a WaitFor return we cannot read."""

DECISION_TYPES: tuple[str, ...] = (
    "goTo",
    "goToMany",
    "gracefulComplete",
    "forceComplete",
    "forceFail",
    "deadEnd",
    "forceCompleteIfChannelsEmpty",
    "rpcResult",
    "unknown",
)
"""``decision.type`` values: Dex's eight plus ``unknown`` for a return we cannot read."""

CLOSE_DECISION_TYPES: frozenset[str] = frozenset(
    {"gracefulComplete", "forceComplete", "forceFail", "deadEnd", "forceCompleteIfChannelsEmpty"}
)
"""Decision types that end a branch or the Flow: the seed's "close markers"."""


@dataclass(frozen=True)
class Span:
    """A position in the analysed source: 1-based line, 0-based column (as ``ast`` reports)."""

    line: int
    col: int

    @classmethod
    def at(cls, line: int | None, col: int | None) -> Span | None:
        """Build a span from optional ``ast`` positions; None when the line is unknown."""
        if line is None:
            return None
        return cls(line, col or 0)


@dataclass(frozen=True)
class WaitCondition:
    """One condition of a WaitFor return.

    Attributes:
        kind: ``channel``, ``timer``, ``subflow`` or ``unknown``.
        label: What the diagram shows, e.g. ``contractEditToken.for 1`` or ``24 hours timer``.
        resource_id: The channel node id for channel conditions.
        expression: The source text of the condition, kept for ``unknown`` ones.
        group: The 0-based ConditionCombination index inside ``any_combination_of``.
    """

    kind: Literal["channel", "timer", "subflow", "unknown"]
    label: str
    resource_id: str | None = None
    expression: str | None = None
    group: int | None = None


@dataclass(frozen=True)
class WaitInfo:
    """The ``wait`` payload of a wait node: the Wait factory used and its conditions."""

    type: str
    conditions: tuple[WaitCondition, ...] = ()


@dataclass(frozen=True)
class Cancellation:
    """A Step type a decision cancels: Flow-wide (``all``) or among its ``siblings``."""

    step_id: str
    scope: Literal["all", "siblings"]


@dataclass(frozen=True)
class DecisionInfo:
    """The ``decision`` payload of a decision node.

    Attributes:
        type: One of :data:`DECISION_TYPES`.
        checked_channels: Channel node ids a ``forceCompleteIfChannelsEmpty`` checks.
        cancellations: Step types this decision cancels.
    """

    type: str
    checked_channels: tuple[str, ...] = ()
    cancellations: tuple[Cancellation, ...] = ()

    @property
    def is_close(self) -> bool:
        """True for the close markers (deadEnd, gracefulComplete, forceComplete, ...)."""
        return self.type in CLOSE_DECISION_TYPES


@dataclass(frozen=True)
class ResourceInfo:
    """The ``resource`` payload of a channel or attribute node."""

    value_type: str | None
    is_map: bool = False
    variable: str | None = None


@dataclass(frozen=True)
class Node:
    """One node of the graph; ``parent_id`` links waits and decisions to their owner."""

    id: str
    kind: NodeKind
    name: str
    parent_id: str | None = None
    condition: str | None = None
    start: bool = False
    wait: WaitInfo | None = None
    decision: DecisionInfo | None = None
    resource: ResourceInfo | None = None
    description: str | None = None
    span: Span | None = None

    @classmethod
    def step(
        cls, name: str, *, start: bool, description: str | None, span: Span | None
    ) -> Node:
        """A registered Step, ``step:<Type>``."""
        return cls(f"step:{name}", "step", name, start=start, description=description, span=span)

    @classmethod
    def wait_node(
        cls, owner: Node, wait: WaitInfo, condition: str | None, span: Span
    ) -> Node:
        """One WaitFor return of ``owner``, ``wait:<Step>:<line>:<col>``."""
        node_id = f"wait:{owner.name}:{span.line}:{span.col}"
        return cls(node_id, "wait", wait.type, owner.id, condition, wait=wait, span=span)

    @classmethod
    def decision_node(
        cls, owner: Node, decision: DecisionInfo, condition: str | None, span: Span
    ) -> Node:
        """One Execute, RPC or timeout-handler return, ``decision:<Owner>:<line>:<col>``."""
        node_id = f"decision:{owner.name}:{span.line}:{span.col}"
        return cls(
            node_id, "decision", decision.type, owner.id, condition, decision=decision, span=span
        )

    @classmethod
    def resource_node(
        cls, kind: Literal["channel", "attribute"], name: str, info: ResourceInfo,
        span: Span | None,
    ) -> Node:
        """A Channel or Attribute (map) under its Dex name, ``channel:<name>``."""
        return cls(f"{kind}:{name}", kind, name, resource=info, span=span)

    @classmethod
    def rpc_node(cls, name: str, description: str | None, span: Span | None) -> Node:
        """An ``@rpc`` method of the Flow, ``rpc:<name>``."""
        return cls(f"rpc:{name}", "rpc", name, description=description, span=span)

    @classmethod
    def timeout_handler(cls, flow_name: str, description: str | None, span: Span | None) -> Node:
        """The Flow's ``handle_timeout``, ``timeout_handler:<Flow>``."""
        return cls(
            f"timeout_handler:{flow_name}", "timeout_handler", "handle_timeout",
            description=description, span=span,
        )

    @classmethod
    def unknown(cls, owner: Node, expression: str, span: Span) -> Node:
        """A target that cannot be resolved statically, ``unknown:<Owner>:<line>:<col>``."""
        node_id = f"unknown:{owner.name}:{span.line}:{span.col}"
        return cls(node_id, "unknown", expression, owner.id, span=span)


@dataclass(frozen=True)
class Edge:
    """One connection. ``source``/``target`` are serialised as FDG's ``from``/``to``."""

    id: str
    kind: EdgeKind
    source: str
    target: str
    label: str | None = None
    condition: str | None = None
    multiplicity: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    """A problem found while reading the source, with the file and line it concerns."""

    severity: Severity
    code: str
    message: str
    path: str
    line: int | None = None
    col: int | None = None

    def format(self) -> str:
        """Render as ``path:line:col: severity code: message``."""
        where = self.path
        if self.line is not None:
            where += f":{self.line}:{(self.col or 0) + 1}"
        return f"{where}: {self.severity} {self.code}: {self.message}"


@dataclass(frozen=True)
class FlowDefinitionGraph:
    """The static definition graph of one Flow, read from its source without running it."""

    flow_name: str
    source_path: str
    start_step_id: str | None
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    flow_span: Span | None = None
    _index: dict[str, Node] = field(default_factory=dict, init=False, repr=False, compare=False)
    _children: dict[str, list[Node]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _outgoing: dict[str, list[Edge]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for node in self.nodes:
            self._index[node.id] = node
            if node.parent_id is not None:
                self._children.setdefault(node.parent_id, []).append(node)
        for edge in self.edges:
            self._outgoing.setdefault(edge.source, []).append(edge)

    @property
    def valid(self) -> bool:
        """True when no error-severity diagnostic was raised (FDG's ``valid``)."""
        return not any(d.severity == "error" for d in self.diagnostics)

    def node(self, node_id: str) -> Node:
        """Return the node with ``node_id``; KeyError names the id when it is absent."""
        try:
            return self._index[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id!r} in the graph of {self.flow_name}") from None

    def nodes_of(self, kind: str) -> tuple[Node, ...]:
        """The nodes of one kind, in graph order."""
        return tuple(node for node in self.nodes if node.kind == kind)

    def edges_of(self, kind: str) -> tuple[Edge, ...]:
        """The edges of one kind, in graph order."""
        return tuple(edge for edge in self.edges if edge.kind == kind)

    def edges_from(self, node_id: str) -> tuple[Edge, ...]:
        """The edges leaving ``node_id``, in graph order."""
        return tuple(self._outgoing.get(node_id, ()))

    def children(self, parent_id: str) -> tuple[Node, ...]:
        """The waits, decisions and unknown targets owned by ``parent_id``, in source order."""
        return tuple(self._children.get(parent_id, ()))

    @property
    def steps(self) -> tuple[Node, ...]:
        """The Step nodes, start Step first, then in StepList order."""
        return self.nodes_of("step")
