"""``definition_graph()``: a Flow's static definition graph, ready to show, save or inspect.

>>> view = definition_graph("dexviz/examples/contract_edit.py")   # doctest: +SKIP
>>> view.save("contract_edit.svg"); print(view.to_markdown(locale="zh-Hans"))  # doctest: +SKIP

The source is read with ``ast`` and never imported or executed (see
:mod:`dexviz.analysis.definition`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from dexviz.analysis.definition import (
    FlowDefinitionGraph,
    analyze_flow,
    to_json,
    to_markdown,
)
from dexviz.viz.definition_dot import DefinitionDotOptions, definition_dot
from dexviz.viz.render import GraphView

__all__ = ["DefinitionGraphView", "definition_graph"]


def definition_graph(
    source: object,
    flow: str | None = None,
    *,
    rankdir: str = "TB",
    hide_resources: bool = False,
    highlight: Iterable[str] = (),
    collapse: bool = False,
) -> DefinitionGraphView:
    """Analyse a Flow's source statically and return its definition graph view.

    Args:
        source: A path to a ``.py`` file (``"file.py:FlowName"`` also works), a module, or a
            Flow class or instance (its source file is read; nothing is executed).
        flow: The Flow class name (or Flow type) when the file defines several Flows.
        rankdir: ``"TB"`` (top to bottom) or ``"LR"`` (left to right).
        hide_resources: Leave Channels and Attributes out of the picture.
        highlight: Names of Steps to outline.
        collapse: Draw compact Step boxes and merge parallel edges.

    Raises:
        DefinitionSourceError: A syntax error, no Flow, or several Flows and no ``flow``
            (the message names the file and line).
        FileNotFoundError: The path does not exist.
        ValueError: A bad ``rankdir``, or ``highlight`` names an unknown Step.
    """
    model = analyze_flow(source, flow)
    options = DefinitionDotOptions(
        rankdir=rankdir,
        hide_resources=hide_resources,
        highlight=frozenset([highlight] if isinstance(highlight, str) else highlight),
        collapse=collapse,
    )
    return DefinitionGraphView(model, options)


class DefinitionGraphView(GraphView):
    """A Flow Definition Graph with its outputs: JSON, Markdown, DOT, SVG/PNG/PDF, display.

    Attributes:
        model: The analysed :class:`FlowDefinitionGraph` (nodes, edges, diagnostics).
        options: How the picture is drawn.
    """

    def __init__(
        self, model: FlowDefinitionGraph, options: DefinitionDotOptions | None = None
    ) -> None:
        self.model = model
        self.options = options or DefinitionDotOptions()
        self.options.check(model)

    def to_dot(self) -> str:
        """The picture as deterministic DOT text."""
        return definition_dot(self.model, self.options)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The graph as Dex FDG 1.0 JSON."""
        return to_json(self.model, indent=indent)

    def to_markdown(self, locale: str = "en") -> str:
        """The seed-style listing (Flow, start Step, Steps, connections); ``zh-Hans`` too."""
        return to_markdown(self.model, locale)

    def _text_formats(self) -> Mapping[str, Callable[[], str]]:
        return {**super()._text_formats(), ".json": self.to_json, ".md": self.to_markdown}

    @property
    def valid(self) -> bool:
        """True when the analysis raised no error diagnostic."""
        return self.model.valid

    def __repr__(self) -> str:
        model = self.model
        counts = ", ".join(
            f"{kind}s={len(model.nodes_of(kind))}" for kind in ("step", "channel", "attribute")
        )
        return (
            f"DefinitionGraphView(flow={model.flow_name!r}, {counts}, "
            f"edges={len(model.edges)}, diagnostics={len(model.diagnostics)})"
        )
