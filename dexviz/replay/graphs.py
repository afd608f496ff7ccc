"""The debugger's pictures: the lineage and definition graphs and the timeline, at the cursor.

Each picture is built once per shape (per run and history length for the lineage graph and the
timeline, once for the definition graph) and then only re-marked per step. A picture that
cannot be drawn (no Graphviz, no matplotlib, no Flow source) gives a reason instead of an
exception, so the other panels keep working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dexviz.analysis.executions import RunExecutions, build_executions
from dexviz.analysis.lineage import LineageGraph, lineage_graph
from dexviz.analysis.sources import find_recorded_source
from dexviz.history import History
from dexviz.replay._index import HistoryIndex
from dexviz.replay.focus import Focus, definition_focus_classes, neighbourhood
from dexviz.replay.highlight import (
    CursorMarks,
    LineageLayout,
    SvgCache,
    definition_classes,
    lineage_classes,
)
from dexviz.replay.timeline_cursor import TimelinePicture, timeline_picture

__all__ = ["AUTO_COLLAPSE_ABOVE", "GraphUnavailable", "Pictures", "RunLineage"]

AUTO_COLLAPSE_ABOVE = 20
"""With ``collapse_at="auto"``, runs with more executions collapse same-type siblings."""


class GraphUnavailable(RuntimeError):
    """A picture cannot be drawn here; the message says why and what to install."""


@dataclass(frozen=True)
class RunLineage:
    """One run's execution records, lineage graph, highlight layout and DOT text."""

    run: RunExecutions
    graph: LineageGraph
    layout: LineageLayout
    dot: str


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def _check_collapse(collapse_at: int | str | None) -> int | str | None:
    if collapse_at != "auto" and collapse_at is not None and not isinstance(collapse_at, int):
        raise ValueError(f"collapse_at must be 'auto', None or an int, got {collapse_at!r}")
    return collapse_at


def _live_class(spec: Any) -> type | None:
    """The recording Flow class when this process still has it (a Flow typed into cells).

    Only an already-loaded module is looked at (``sys.modules``): nothing is imported.
    """
    module = sys.modules.get(str(spec.get("module")))
    qualname = spec.get("qualname")
    if module is None or not isinstance(qualname, str) or "<locals>" in qualname:
        return None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) else None


class Pictures:
    """Builds, caches and marks the debugger's graphs and timeline.

    Args:
        history: Returns the history as it is now (it may grow in live mode).
        index: The history's index (creations, kinds ...).
        collapse_at: ``"auto"``, None (never collapse) or the group size that collapses.
        flow_source: The Flow's source for the definition graph (default: the recorded file).
        token_channel: A Channel whose holdings the timeline draws in their own lanes.
        history_dir: The folder of the history file, where a recorded source may lie.
    """

    def __init__(self, history: Callable[[], History], index: HistoryIndex, *,
                 collapse_at: int | str | None = "auto", flow_source: object | None = None,
                 token_channel: str | None = None, history_dir: Path | None = None) -> None:
        self._history = history
        self._index = index
        self.collapse_at = _check_collapse(collapse_at)
        self.flow_source = flow_source
        self.token_channel = token_channel
        self.history_dir = history_dir
        self._svgs = SvgCache()
        self._runs: dict[tuple[str, int], RunLineage] = {}
        self._timelines: dict[tuple[str, int], TimelinePicture] = {}
        self._focus: dict[tuple[str, int, str], tuple[LineageLayout, str]] = {}
        self._whole: dict[tuple[str, int], LineageGraph] = {}
        self._focus_timeline: dict[tuple[str, int, str], TimelinePicture] = {}
        self._definition: Any = None
        self._definition_error: str | None = None

    # ---------------------------------------------------------------- lineage
    def lineage(self, run_id: str) -> RunLineage:
        """The run's records, lineage graph, layout and DOT, built once per history length."""
        from dexviz.viz._lineage_dot import lineage_dot

        key = (run_id, self._index.count)
        found = self._runs.get(key)
        if found is None:
            run = build_executions(self._history(), run_id)
            graph = lineage_graph(run, collapse_at=self._collapse(len(run)))
            found = RunLineage(run, graph, LineageLayout.of(graph, self._index),
                             lineage_dot(graph, rankdir="LR", legend=False))
            self._runs = {k: v for k, v in self._runs.items() if k[0] != run_id}
            self._runs[key] = found
        return found

    def set_collapse(self, collapse_at: int | str | None) -> None:
        """Change the lineage grouping (``"auto"``, None or a group size); redraws later."""
        self.collapse_at = _check_collapse(collapse_at)
        self._runs.clear()

    def _collapse(self, executions: int) -> int | None:
        if self.collapse_at == "auto":
            return 3 if executions > AUTO_COLLAPSE_ABOVE else None
        return self.collapse_at if isinstance(self.collapse_at, int) else None

    def lineage_classes(self, run_id: str, marks: CursorMarks) -> dict[str, str]:
        """The extra SVG classes of the lineage graph at the cursor."""
        return lineage_classes(self.lineage(run_id).layout, marks)

    def lineage_svg(self, run_id: str, marks: CursorMarks) -> str:
        """The run's lineage graph as SVG, marked at the cursor.

        Raises:
            GraphUnavailable: Graphviz (program or package) is missing.
        """
        lineage = self.lineage(run_id)
        try:
            marked = self._svgs.get(lineage.dot)
        except (ImportError, RuntimeError) as error:
            raise GraphUnavailable(_reason(error)) from None
        return marked.with_classes(lineage_classes(lineage.layout, marks))

    def focus_svg(self, run_id: str, marks: CursorMarks, node_id: str) -> str:
        """The neighbourhood of one lineage node (uncollapsed), as SVG marked at the cursor.

        Raises:
            GraphUnavailable: Graphviz is missing.
            KeyError: the node is not in the run's lineage graph.
        """
        layout, dot = self._focus_picture(run_id, node_id)
        try:
            marked = self._svgs.get(dot)
        except (ImportError, RuntimeError) as error:
            raise GraphUnavailable(_reason(error)) from None
        return marked.with_classes(lineage_classes(layout, marks))

    def focus_classes(self, run_id: str, marks: CursorMarks, node_id: str) -> dict[str, str]:
        """The extra SVG classes of the focus picture of one lineage node at the cursor.

        Raises:
            KeyError: the node is not in the run's lineage graph.
        """
        return lineage_classes(self._focus_picture(run_id, node_id)[0], marks)

    def _focus_picture(self, run_id: str, node_id: str) -> tuple[LineageLayout, str]:
        """The layout and DOT of one node's neighbourhood, built once per history length."""
        from dexviz.viz._lineage_dot import lineage_dot

        key = (run_id, self._index.count, node_id)
        found = self._focus.get(key)
        if found is None:
            part = neighbourhood(self._uncollapsed(run_id), node_id)
            found = (LineageLayout.of(part, self._index),
                     lineage_dot(part, rankdir="LR", legend=False))
            self._focus = {key: found}
        return found

    def _uncollapsed(self, run_id: str) -> LineageGraph:
        """The run's lineage graph with every execution its own node (for Focus)."""
        key = (run_id, self._index.count)
        graph = self._whole.get(key)
        if graph is None:
            graph = lineage_graph(self.lineage(run_id).run, collapse_at=None)
            self._whole = {key: graph}
        return graph

    def focus(self, run_id: str, node_id: str) -> Focus:
        """The focus neighbourhood of one lineage node (what Focus shows in every view).

        Raises:
            KeyError: the node is not in the run's lineage graph.
        """
        return Focus.around(self._uncollapsed(run_id), node_id, self._index.executions)

    # ---------------------------------------------------------------- definition
    def definition_dot(self) -> str:
        """The Flow's definition graph as DOT text.

        Raises:
            GraphUnavailable: no source is known, or it cannot be analysed.
        """
        if self._definition is None and self._definition_error is None:
            self._load_definition()
        if self._definition_error is not None:
            raise GraphUnavailable(self._definition_error)
        return str(self._definition.to_dot())

    def _load_definition(self) -> None:
        from dexviz.viz.definition_view import definition_graph

        spec = self._history().flow_spec
        qualname = spec.get("qualname")
        flow = qualname.rsplit(".", 1)[-1] if isinstance(qualname, str) and qualname else None
        source = self.flow_source
        if source is None:
            lookup = find_recorded_source(spec, history_dir=self.history_dir)
            source = str(lookup.found) if lookup.found is not None else _live_class(spec)
            if source is None:
                self._definition_error = f"the Flow's source is not known: {lookup.explain()}"
                return
        try:
            self._definition = definition_graph(source, flow)
        except Exception as error:  # noqa: BLE001 - any analysis failure is shown, not raised
            self._definition_error = f"cannot analyse the Flow's source: {_reason(error)}"

    def definition_svg(self, marks: CursorMarks, focus: Focus | None = None) -> str:
        """The definition graph as SVG with the cursor's Steps and Channels marked.

        With ``focus``, what lies outside the focus neighbourhood is dimmed (``dx-unfocused``).

        Raises:
            GraphUnavailable: no source, or Graphviz is missing.
        """
        dot = self.definition_dot()
        try:
            marked = self._svgs.get(dot)
        except (ImportError, RuntimeError) as error:
            raise GraphUnavailable(_reason(error)) from None
        return marked.with_classes(self.definition_classes(marks, focus, marked.ids))

    def definition_classes(self, marks: CursorMarks, focus: Focus | None = None,
                           ids: tuple[str, ...] | None = None) -> dict[str, str]:
        """The definition graph's extra SVG classes at the cursor, dimmed outside ``focus``.

        ``ids`` are the SVG's group ids (by default every node and edge of the model).

        Raises:
            GraphUnavailable: no source (only with ``focus``: it needs the model).
        """
        classes = definition_classes(marks, self._index.executions)
        if focus is None:
            return classes
        self.definition_dot()  # loads the model, or says why it cannot
        model = self._definition.model
        if ids is None:
            ids = tuple(n.id for n in model.nodes if n.kind in ("step", "channel")) + tuple(
                e.id for e in model.edges)
        for svg_id, dim in definition_focus_classes(model, ids, focus).items():
            classes[svg_id] = f"{classes[svg_id]} {dim}" if svg_id in classes else dim
        return classes

    # ---------------------------------------------------------------- timeline
    def timeline(self, run_id: str) -> TimelinePicture:
        """The run's timeline picture (drawn once per history length).

        Raises:
            GraphUnavailable: matplotlib is missing.
        """
        key = (run_id, self._index.count)
        picture = self._timelines.get(key)
        if picture is None:
            run = self.lineage(run_id).run
            try:
                picture = timeline_picture(run, self.token_channel)
            except ImportError as error:
                raise GraphUnavailable(_reason(error)) from None
            self._timelines = {k: v for k, v in self._timelines.items() if k[0] != run_id}
            self._timelines[key] = picture
        return picture

    def focus_timeline(self, run_id: str, focus: Focus) -> TimelinePicture:
        """The run's timeline with only the focus's executions in lanes (the whole time axis).

        Raises:
            GraphUnavailable: matplotlib is missing.
        """
        if not focus.executions:
            return self.timeline(run_id)
        key = (run_id, self._index.count, focus.centre)
        picture = self._focus_timeline.get(key)
        if picture is None:
            run = self.lineage(run_id).run
            try:
                picture = timeline_picture(run, self.token_channel, executions=focus.executions)
            except ImportError as error:
                raise GraphUnavailable(_reason(error)) from None
            self._focus_timeline = {key: picture}
        return picture
