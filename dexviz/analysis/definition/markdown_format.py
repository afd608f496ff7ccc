"""Write a FlowDefinitionGraph as the Markdown listing of Dex's docs (the seed's format).

The listing has the Flow, its starting Step, the Steps in alphabetical order with their
docstring's first line, WaitFor conditions and close markers, then every connection in the
graph's sorted edge order. English by default; ``locale="zh-Hans"`` uses the seed's own
headings (``Flow：``, ``起始 Step：``, ``Step 列表``, ``条件``, ``连接``). Step, Channel and
Dex verb names are never translated.
"""

from __future__ import annotations

from dataclasses import dataclass

from dexviz.analysis.definition.model import Edge, FlowDefinitionGraph, Node

__all__ = ["LOCALES", "MarkdownLabels", "to_markdown"]


@dataclass(frozen=True)
class MarkdownLabels:
    """The words of one locale's listing."""

    flow: str
    start: str
    no_start: str
    steps: str
    rpcs: str
    timeout_handler: str
    connections: str
    diagnostics: str
    condition: str
    colon: str
    separator: str
    cancels: str
    cancels_siblings: str


LOCALES: dict[str, MarkdownLabels] = {
    "en": MarkdownLabels(
        flow="Flow", start="Starting Step", no_start="none (started by RPCs)",
        steps="Steps", rpcs="RPCs", timeout_handler="Timeout handler",
        connections="Connections", diagnostics="Diagnostics", condition="condition",
        colon=": ", separator=", ", cancels="cancels", cancels_siblings="cancels siblings",
    ),
    "zh-Hans": MarkdownLabels(
        flow="Flow", start="起始 Step", no_start="无（由 RPC 启动）",
        steps="Step 列表", rpcs="RPC 列表", timeout_handler="超时处理",
        connections="连接", diagnostics="诊断", condition="条件",
        colon="：", separator="、", cancels="取消", cancels_siblings="取消同级",
    ),
}
"""The supported locales of :func:`to_markdown`."""


def to_markdown(graph: FlowDefinitionGraph, locale: str = "en") -> str:
    """The graph's listing in the seed's Markdown format.

    Raises:
        ValueError: ``locale`` is not one of :data:`LOCALES`.
    """
    if locale not in LOCALES:
        raise ValueError(f"unknown locale {locale!r}; choose one of {sorted(LOCALES)}")
    words = LOCALES[locale]
    start = graph.node(graph.start_step_id).name if graph.start_step_id else None
    lines = [
        f"**{words.flow}{words.colon}{graph.flow_name}**",
        "",
        f"{words.start}{words.colon}" + (f"`{start}`" if start else words.no_start),
        "",
    ]
    lines += _section(words.steps, _owner_items(graph, "step", words))
    lines += _section(words.rpcs, _owner_items(graph, "rpc", words))
    lines += _section(words.timeout_handler, _owner_items(graph, "timeout_handler", words))
    lines += _section(words.connections, [_connection(graph, e, words) for e in graph.edges])
    lines += _section(words.diagnostics, [f"- {d.format()}" for d in graph.diagnostics])
    return "\n".join(lines).rstrip("\n") + "\n"


def _section(title: str, items: list[str]) -> list[str]:
    return [f"**{title}**", "", *items, ""] if items else []


def _owner_items(graph: FlowDefinitionGraph, kind: str, words: MarkdownLabels) -> list[str]:
    owners = sorted(graph.nodes_of(kind), key=lambda n: (n.name.casefold(), n.name))
    items = []
    for owner in owners:
        head = f"- `{owner.name}`"
        if owner.description:
            head += f"{words.colon}{owner.description}"
        items.append(head)
        items += [f"  - {line}" for line in _child_lines(graph, owner, words)]
    return items


def _child_lines(graph: FlowDefinitionGraph, owner: Node, words: MarkdownLabels) -> list[str]:
    children = graph.children(owner.id)
    lines = [_wait_line(w, words) for w in children if w.wait is not None]
    for node in children:
        decision = node.decision
        if decision is None or not (decision.is_close or decision.cancellations):
            continue
        line = f"`{node.name}`" + _condition(node, words)
        extras = [f"channel `{graph.node(c).name}`" for c in decision.checked_channels]
        extras += [
            f"{words.cancels_siblings if c.scope == 'siblings' else words.cancels} "
            f"`{c.step_id.partition(':')[2]}`"
            for c in decision.cancellations
        ]
        if extras:
            line += words.colon + words.separator.join(extras)
        lines.append(line)
    return lines


def _wait_line(node: Node, words: MarkdownLabels) -> str:
    assert node.wait is not None
    line = f"WaitFor `{node.wait.type}`" + _condition(node, words)
    conditions = [f"{c.kind} `{c.label}`" for c in node.wait.conditions]
    if conditions:
        line += words.colon + words.separator.join(conditions)
    return line


def _condition(node: Node, words: MarkdownLabels) -> str:
    return "" if node.condition is None else f" {words.condition} `{node.condition}`"


def _connection(graph: FlowDefinitionGraph, edge: Edge, words: MarkdownLabels) -> str:
    source = _endpoint(graph, graph.node(edge.source), words)
    target = _endpoint(graph, graph.node(edge.target), words)
    label = f"{words.colon}{edge.label}" if edge.label else ""
    return f"- {source} → {target}{label}"


def _endpoint(graph: FlowDefinitionGraph, node: Node, words: MarkdownLabels) -> str:
    if node.parent_id is None:
        return f"`{node.name}` ({node.kind})"
    details = [node.kind, graph.node(node.parent_id).name]
    if node.condition is not None:
        details.append(f"{words.condition} `{node.condition}`")
    return f"`{node.name}` ({'; '.join(details)})"
