"""Builds the lineage graph's nodes and edges from a run's execution records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from dexviz.analysis.executions import Execution, ExecutionStatus, RunExecutions
from dexviz.analysis.lineage_records import STATUS_ORDER, LineageEdge, LineageNode, group_status
from dexviz.history import EventKind
from dexviz.history._plural import plural
from dexviz.history.fold import items, text
from dexviz.history.instance_names import condition_label, shown_name

START = "__start__"
END = "__end__"
CLIENT = "__client__"
TIMEOUT_HANDLER = "__timeout_handler__"
_CLOSING_KINDS = (
    "GRACEFUL_COMPLETE",
    "FORCE_COMPLETE",
    "FORCE_COMPLETE_IF_CHANNELS_EMPTY",
    "FORCE_FAIL",
)


def source_label(node_id: str) -> str:
    """The header of a source node, as Dex Web writes it."""
    if node_id.startswith("__rpc/"):
        return f"RPC · {node_id[len('__rpc/') :]}"
    return {START: "Flow start", CLIENT: "Client publish", TIMEOUT_HANDLER: "Timeout handler"}.get(
        node_id, node_id
    )


def _next_text(ids: tuple[str, ...], limit: int = 3) -> str:
    """``EditContract-3`` or, for a fan-out, ``EnterContractEdit ×8, FinishContractEdits-1``."""
    by_type: dict[str, list[str]] = {}
    for execution_id in ids:
        by_type.setdefault(execution_id.rsplit("-", 1)[0], []).append(execution_id)
    parts = [
        members[0] if len(members) == 1 else f"{step_type} ×{len(members)}"
        for step_type, members in by_type.items()
    ]
    shown = ", ".join(parts[:limit])
    return shown + (f" +{len(parts) - limit}" if len(parts) > limit else "")


def _wait_labels(execution: Execution) -> str | None:
    wait = execution.wait or {}
    labels = [condition_label(c) for c in items(wait, "conditions") if isinstance(c, Mapping)]
    if not labels:
        return None
    # all_of joins with "&", any_of and any_combination_of with "|" (a group per combination).
    kind = wait.get("kind")
    if kind == "ANY_OF":
        return " | ".join(labels)
    if kind == "ANY_COMBINATION_OF":
        groups = [g for g in items(wait, "combinations") if isinstance(g, list)]
        if groups:
            return " | ".join(
                "("
                + " & ".join(labels[i] for i in g if isinstance(i, int) and i < len(labels))
                + ")"
                for g in groups
            )
    return " & ".join(labels)


def outcome_line(execution: Execution, closed: bool) -> str:
    """One line saying how the execution ended (or what it is doing)."""
    status = execution.status
    if status is ExecutionStatus.CANCELED:
        return f"canceled by {execution.canceled_by or '?'} ({execution.canceled_phase or '?'})"
    if status is ExecutionStatus.FAILED:
        tries = len(execution.attempts_of("execute")) or len(execution.attempts_of("wait_for"))
        route = f" → {execution.recovery}" if execution.recovery else ""
        return f"failed after {plural(tries, 'attempt')}{route}"
    if status is ExecutionStatus.COMPLETED:
        kind = (execution.outcome or "").lower()
        return f"go_to {_next_text(execution.next)}" if kind == "next" else kind
    if status is ExecutionStatus.WAITING:
        return f"waiting: {_wait_labels(execution) or 'condition'}"
    if status is ExecutionStatus.PENDING:
        return "pending at close" if closed else "queued"
    return "running"


def _detail(execution: Execution, closed: bool) -> tuple[str, ...]:
    lines = [execution.execution_id, outcome_line(execution, closed)]
    wait = _wait_labels(execution)
    if wait and execution.status is not ExecutionStatus.WAITING:
        lines.append(f"waited {wait}")
    failed = execution.failed_attempts
    if failed and execution.status is not ExecutionStatus.FAILED:
        lines.append(plural(failed, "failed attempt"))
    if execution.error_type:
        name = execution.error_type.rsplit(".", 1)[-1]
        lines.append(f"{name}: {execution.error_message or ''}"[:60])
    return tuple(lines)


class LineageBuilder:
    """One-shot builder: ``build()`` returns (nodes, edges)."""

    def __init__(self, run: RunExecutions, collapse_at: int | None, messages: bool) -> None:
        self.run = run
        self.collapse_at = collapse_at
        self.messages = messages
        self.node_of: dict[str, str] = {}
        self.members: dict[str, list[str]] = {}
        self.sources: dict[str, None] = {}

    def parent_of(self, execution: Execution) -> str:
        """The parent node's id: the parent execution, an RPC source, or the Flow start."""
        parent = execution.parent or START
        if parent in self.run or parent.startswith("__rpc/"):
            return parent
        return START

    def publisher_of(self, publisher: str) -> str:
        """The node id of a MessagePublished ``publisher``."""
        if publisher in self.run:
            return publisher
        if publisher.startswith("rpc:"):
            return f"__rpc/{publisher[len('rpc:') :]}"
        return TIMEOUT_HANDLER if publisher == "timeout_handler" else CLIENT

    def _node(self, key: str) -> str:
        if key not in self.run:
            self.sources.setdefault(key)
            return key
        return self.node_of[key]

    def _assign(self) -> None:
        depth: dict[str, int] = {}
        levels: dict[int, list[str]] = {}
        for execution in self.run.values():
            parent = self.parent_of(execution)
            depth[execution.execution_id] = depth.get(parent, 0) + 1
            levels.setdefault(depth[execution.execution_id], []).append(execution.execution_id)
        for level in sorted(levels):
            buckets: dict[tuple[str, str], list[str]] = {}
            for execution_id in levels[level]:
                execution = self.run[execution_id]
                parent_node = self._node(self.parent_of(execution))
                buckets.setdefault((parent_node, execution.step_type), []).append(execution_id)
            for ids in buckets.values():
                collapse = self.collapse_at is not None and len(ids) >= self.collapse_at
                for execution_id in ids:
                    node_id = f"group:{ids[0]}" if collapse else execution_id
                    self.node_of[execution_id] = node_id
                    self.members.setdefault(node_id, []).append(execution_id)

    def _step_node(self, node_id: str, ids: list[str]) -> LineageNode:
        closed = self.run.close is not None
        first = self.run[ids[0]]
        if len(ids) == 1 and node_id == ids[0]:
            return LineageNode(
                node_id,
                "step",
                first.step_type,
                str(first.status),
                (node_id,),
                detail=_detail(first, closed),
                has_wait_for=first.has_wait_for,
            )
        counts = Counter(str(self.run[i].status) for i in ids)
        statuses = tuple((str(s), counts[s]) for s in STATUS_ORDER if counts[s])
        detail = (f"{ids[0]} … {ids[-1]}", " · ".join(f"{n} {s}" for s, n in statuses))
        return LineageNode(
            node_id,
            "group",
            f"{first.step_type} ×{len(ids)}",
            group_status(counts),
            tuple(ids),
            statuses,
            detail,
            first.has_wait_for,
        )

    def _lineage_edges(self) -> Iterator[LineageEdge]:
        counts: dict[tuple[str, str, str], int] = {}
        for execution in self.run.values():
            kind = "recovery" if execution.reason == "recovery" else "lineage"
            key = (
                self._node(self.parent_of(execution)),
                self.node_of[execution.execution_id],
                kind,
            )
            counts[key] = counts.get(key, 0) + 1
        for (source, target, kind), count in counts.items():
            yield LineageEdge(
                source, target, kind, "Execute failure" if kind == "recovery" else "", count
            )

    def _message_edges(self) -> Iterator[LineageEdge]:
        publishers: dict[str, str] = {}
        counts: dict[tuple[str, str, str], int] = {}
        for event in self.run.events:
            kind, payload = str(event.kind), event.payload
            message_id = str(payload.get("message_id"))
            if kind == EventKind.MESSAGE_PUBLISHED:
                publishers[message_id] = self.publisher_of(text(payload, "publisher") or "client")
            elif kind == EventKind.MESSAGE_CONSUMED and message_id in publishers:
                consumer = text(payload, "consumer") or event.execution_id or ""
                if consumer not in self.run:
                    continue
                key = (
                    self._node(publishers[message_id]),
                    self.node_of[consumer],
                    shown_name(str(payload.get("channel"))),
                )
                counts[key] = counts.get(key, 0) + 1
        for (source, target, channel), count in counts.items():
            label = channel if count == 1 else f"{channel} ×{count}"
            yield LineageEdge(source, target, "message", label, count)

    def _close(self) -> tuple[LineageNode | None, list[LineageEdge]]:
        close = self.run.close
        if close is None:
            return None, []
        counts: dict[tuple[str, str], int] = {}
        for execution in self.run.values():
            label = _close_label(execution, close.status)
            if label is not None:
                key = (self.node_of[execution.execution_id], label)
                counts[key] = counts.get(key, 0) + 1
        edges = [
            LineageEdge(n, END, "close", label if c == 1 else f"{label} ×{c}", c)
            for (n, label), c in counts.items()
        ]
        detail = [f"status {close.status}"]
        if close.error_type:
            detail.append(f"{close.error_type}: {close.error_message or ''}"[:60])
        if close.outputs:
            detail.append(plural(len(close.outputs), "output"))
        return LineageNode(END, "end", "Flow closed", close.status, detail=tuple(detail)), edges

    def build(self) -> tuple[tuple[LineageNode, ...], tuple[LineageEdge, ...]]:
        """Assign groups, then emit sources, executions, the end node and every edge."""
        self._assign()
        edges = list(self._lineage_edges())
        if self.messages:
            edges.extend(self._message_edges())
        end, close_edges = self._close()
        steps = [self._step_node(node_id, ids) for node_id, ids in self.members.items()]
        sources = [LineageNode(s, "source", source_label(s), "Source") for s in self.sources]
        nodes = [*sources, *steps, *([end] if end else [])]
        return tuple(nodes), tuple(edges + close_edges)


def _close_label(execution: Execution, status: str) -> str | None:
    kind = execution.outcome or ""
    decision = execution.decision or {}
    if kind in _CLOSING_KINDS:
        if kind == "FORCE_COMPLETE_IF_CHANNELS_EMPTY" and not decision.get("channels_empty"):
            return None
        if kind == "GRACEFUL_COMPLETE" and status != "COMPLETED":
            return None
        return kind.lower()
    if status == "FAILED" and execution.status is ExecutionStatus.FAILED and not execution.recovery:
        return "WaitFor failed" if execution.execute_start_ns is None else "Execute failed"
    return None
