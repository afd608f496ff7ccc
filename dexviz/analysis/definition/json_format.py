"""Serialise a FlowDefinitionGraph as Dex's Flow Definition Graph JSON, schema version 1.0.

Shape: ``{schemaVersion, valid, source {language, path}, flow {name, startStepId, span},
nodes [...], edges [...], diagnostics [...]}``. Optional fields are omitted when empty, as
Dex's producer does; keys keep a fixed order, so the text is deterministic.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dexviz.analysis.definition.model import (
    Diagnostic,
    Edge,
    FlowDefinitionGraph,
    Node,
    Span,
)

__all__ = ["SCHEMA_VERSION", "to_fdg", "to_json"]

SCHEMA_VERSION = "1.0"
"""The FDG schema version this module writes."""


def to_json(graph: FlowDefinitionGraph, *, indent: int | None = 2) -> str:
    """The graph as FDG 1.0 JSON text (UTF-8 friendly: non-ASCII is kept as is)."""
    return json.dumps(to_fdg(graph), indent=indent, ensure_ascii=False) + "\n"


def to_fdg(graph: FlowDefinitionGraph) -> dict[str, Any]:
    """The graph as an FDG 1.0 dictionary, ready for ``json.dumps``."""
    flow: dict[str, Any] = {"name": graph.flow_name, "startStepId": graph.start_step_id}
    if graph.flow_span is not None:
        flow["span"] = _span(graph.flow_span)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "valid": graph.valid,
        "source": {"language": "python", "path": _text(graph.source_path)},
        "flow": flow,
        "nodes": [_node(node) for node in graph.nodes],
        "edges": [_edge(edge) for edge in graph.edges],
        "diagnostics": [_diagnostic(d) for d in graph.diagnostics],
    }


def _node(node: Node) -> dict[str, Any]:
    data: dict[str, Any] = {"id": node.id, "kind": node.kind, "name": node.name}
    if node.parent_id is not None:
        data["parentId"] = node.parent_id
    if node.condition is not None:
        data["condition"] = node.condition
    if node.kind == "step":
        data["start"] = node.start
    if node.wait is not None:
        data["wait"] = {
            "type": node.wait.type,
            "conditions": [_without_none({
                "kind": c.kind,
                "label": c.label,
                "resourceId": c.resource_id,
                "expression": c.expression,
                "group": c.group,
            }) for c in node.wait.conditions],
        }
    if node.decision is not None:
        data["decision"] = {
            "type": node.decision.type,
            "checkedChannels": list(node.decision.checked_channels),
            "cancellations": [
                {"stepId": c.step_id, "scope": c.scope} for c in node.decision.cancellations
            ],
        }
    if node.resource is not None:
        data["resource"] = _without_none({
            "valueType": node.resource.value_type,
            "map": node.resource.is_map,
            "variable": node.resource.variable,
        })
    if node.span is not None:
        data["span"] = _span(node.span)
    if node.description is not None:
        data["metadata"] = {"description": node.description}
    return data


def _edge(edge: Edge) -> dict[str, Any]:
    return _without_none({
        "id": edge.id,
        "kind": edge.kind,
        "from": edge.source,
        "to": edge.target,
        "label": edge.label,
        "condition": edge.condition,
        "multiplicity": edge.multiplicity,
    })


def _text(path: str) -> str:
    r"""A file name as UTF-8 text: bytes that are not UTF-8 are written as ``\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _diagnostic(diagnostic: Diagnostic) -> dict[str, Any]:
    span: dict[str, Any] = {"path": _text(diagnostic.path)}
    if diagnostic.line is not None:
        span["line"] = diagnostic.line
        span["col"] = diagnostic.col or 0
    return {
        "severity": diagnostic.severity,
        "code": diagnostic.code,
        "message": diagnostic.message,
        "span": span,
    }


def _span(span: Span) -> dict[str, int]:
    return {"line": span.line, "col": span.col}


def _without_none(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}
