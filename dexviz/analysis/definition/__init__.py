"""Static Flow Definition Graph: read a Flow's source with ``ast`` (never running it) into a model.

``analyze_flow(source, flow=None)`` returns a :class:`FlowDefinitionGraph` of frozen nodes, edges
and diagnostics in Dex's FDG 1.0 vocabulary; :func:`to_json` and :func:`to_markdown` serialise it.
Rendering (DOT, SVG, notebook display) lives in :mod:`dexviz.viz.definition_view`.
"""

from dexviz.analysis.definition.analyzer import analyze_flow, analyze_module
from dexviz.analysis.definition.errors import DefinitionSourceError
from dexviz.analysis.definition.json_format import SCHEMA_VERSION, to_fdg, to_json
from dexviz.analysis.definition.markdown_format import LOCALES, to_markdown
from dexviz.analysis.definition.model import (
    DECISION_TYPES,
    EDGE_KINDS,
    NODE_KINDS,
    WAIT_TYPES,
    Cancellation,
    DecisionInfo,
    Diagnostic,
    Edge,
    FlowDefinitionGraph,
    Node,
    ResourceInfo,
    Span,
    WaitCondition,
    WaitInfo,
)

__all__ = [
    "DECISION_TYPES",
    "EDGE_KINDS",
    "LOCALES",
    "NODE_KINDS",
    "SCHEMA_VERSION",
    "WAIT_TYPES",
    "Cancellation",
    "DecisionInfo",
    "DefinitionSourceError",
    "Diagnostic",
    "Edge",
    "FlowDefinitionGraph",
    "Node",
    "ResourceInfo",
    "Span",
    "WaitCondition",
    "WaitInfo",
    "analyze_flow",
    "analyze_module",
    "to_fdg",
    "to_json",
    "to_markdown",
]
