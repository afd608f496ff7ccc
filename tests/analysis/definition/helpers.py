"""Test support for the Flow Definition Graph tests: paths, SDK header, edge summaries."""

from __future__ import annotations

from pathlib import Path

from dexviz.analysis.definition import FlowDefinitionGraph

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "flows"
CONTRACT_EDIT = REPO_ROOT / "dexviz" / "examples" / "contract_edit.py"

HEADER = """\
from __future__ import annotations
from datetime import timedelta
from dexviz import (
    Attribute, AttributeMap, Channel, ChannelMap, ConditionCombination, Context, Flow,
    PersistenceSchema, RPCResult, Step, StepDecision, StepList, StepMovement, StepOptions,
    SubFlow, Timer, Wait, dead_end, force_complete, force_complete_if_channels_empty,
    force_fail, go_to, go_to_many, graceful_complete, rpc,
)
"""
"""The imports every generated test Flow starts with (unless it tests import spellings)."""


def connections(graph: FlowDefinitionGraph) -> list[tuple[str, str, str, str | None]]:
    """Each edge as (kind, from node name, to node name, label)."""
    return [
        (e.kind, graph.node(e.source).name, graph.node(e.target).name, e.label)
        for e in graph.edges
    ]


def decisions(graph: FlowDefinitionGraph, owner: str) -> list[tuple[str, str | None]]:
    """The (type, condition) of each decision of ``owner`` (a Step, RPC or handler name)."""
    owner_node = next(n for n in graph.nodes if n.name == owner and n.parent_id is None)
    return [(n.name, n.condition) for n in graph.children(owner_node.id) if n.kind == "decision"]


def waits(graph: FlowDefinitionGraph, step: str) -> list[tuple[str, list[str], str | None]]:
    """The (type, condition labels, guard) of each wait of ``step``."""
    found = []
    for node in graph.children(f"step:{step}"):
        if node.wait is not None:
            found.append((node.wait.type, [c.label for c in node.wait.conditions], node.condition))
    return found


def transitions(graph: FlowDefinitionGraph) -> set[tuple[str, str, str | None, str | None]]:
    """Each transition as (owner, target, condition, multiplicity)."""
    found = set()
    for edge in graph.edges_of("transition"):
        decision = graph.node(edge.source)
        owner = graph.node(decision.parent_id or decision.id).name
        found.add((owner, graph.node(edge.target).name, edge.condition, edge.multiplicity))
    return found


def codes(graph: FlowDefinitionGraph) -> list[str]:
    """The diagnostic codes, in order."""
    return [d.code for d in graph.diagnostics]
