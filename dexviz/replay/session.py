"""``Replay``: the Debugger without its widget — a cursor over a run and what it shows.

The cursor, the state at it, the highlighted graphs and the timeline cursor: everything the
widget, the static snapshot and the HTML report draw, needing no ipywidgets. The notebook's
``dexviz.widgets.Debugger`` adds the widget and the outputs on top of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dexviz.analysis.exclusive import Holding, holdings
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.model import DebuggerModel, HistorySource

if TYPE_CHECKING:
    from dexviz.replay.focus import Focus
    from dexviz.replay.timeline_cursor import TimelinePicture

__all__ = ["GRAPH_KINDS", "GraphUnavailable", "Replay"]

GRAPH_KINDS: tuple[str, ...] = ("lineage", "definition")
"""The graphs the debugger can draw: the run's lineage graph and the Flow's definition graph."""


class Replay(DebuggerModel):
    """Step through one Flow's execution: replay a History, or drive a simulation Engine.

    The model API (``next``, ``prev``, ``seek``, ``jump``, ``state``, ``continue_``,
    ``run_to``, and for an Engine ``step``, ``fail_next``, ``cancel``) works without
    ipywidgets; ``widget`` binds controls to it, ``snapshot()`` draws static HTML, and a
    notebook displays the widget (or the snapshot when ipywidgets is missing).

    Args:
        source: A History, a history file's path, a SimulationRun (its history), or a
            simulation-mode Engine in which the Flow was started (live: new events extend
            the history).
        flow_id: The Flow to follow when the Engine runs several.
        flow_source: The Flow's source file, module or class, for the definition graph.
            By default the history's recorded ``source_file`` is read, but only from where
            the user or Python put it: the recording module's import location (found without
            importing it), the history file's folder, or the working folder; a file outside
            them (an absolute or ``..`` path from someone else's history) is never opened.
            A Flow typed into notebook cells is read from its cells while the kernel has it.
        collapse_at: ``"auto"`` collapses same-type siblings of runs with more than 20
            executions into ``Type ×N`` nodes (a fan-out's branches become one node with
            their count); None never collapses; an int sets the group size. The
            ``collapse_at`` property (the widget's "Expand" toggle) changes it later, and the
            "Focus" zoom shows the selected execution uncollapsed with its neighbours: the
            lineage graph draws only them, the timeline only their lanes, and the definition
            graph dims the other Steps (``focus()``, ``graph_svg(focus=True)``,
            ``timeline(focus=True)``).
        token_channel: A token Channel whose holdings the timeline draws in their own lanes.
        graph: The graph shown first, ``"lineage"`` or ``"definition"``.

    Raises:
        ValueError: an empty history, a live-mode Engine, an unknown Flow or graph, or a
            ``token_channel`` the Flow does not declare (with a "did you mean").
        TypeError: ``source`` is not a History, SimulationRun or Engine.
    """

    def __init__(self, source: HistorySource, *, flow_id: str | None = None,
                 flow_source: object | None = None, collapse_at: int | str | None = "auto",
                 token_channel: str | None = None, graph: str = "lineage") -> None:
        super().__init__(source, flow_id=flow_id, flow_source=flow_source,
                         collapse_at=collapse_at, token_channel=token_channel)
        self._graph = _check_graph(graph)
        self._token_channel = token_channel
        self._holdings: tuple[int, tuple[Holding, ...]] = (-1, ())
        if token_channel is not None:  # a typo would draw no holdings, silently
            self._holdings = (len(self.history), holdings(self.history, token_channel))

    @property
    def token_channel(self) -> str | None:
        """The token Channel whose holdings the timeline draws in their own lanes, if any."""
        return self._token_channel

    def section_holders(self) -> dict[str, str]:
        """Active executions inside the token Channel's section at the cursor -> the Channel.

        The token is reserved only until the handoff's Execute commits; the Steps after it
        (the protected work) still hold it, which ``exclusive_sections`` knows by its chains.
        """
        channel = self._token_channel
        if channel is None:
            return {}
        history = self.history
        if self._holdings[0] != len(history):
            self._holdings = (len(history), holdings(history, channel))
        seq = self.event.seq
        held: dict[str, str] = {}
        for holding in self._holdings[1]:
            if holding.start_seq <= seq < holding.end_seq:
                for execution_id in holding.chain:
                    if self.state.phase_of(execution_id) is not None:
                        held[execution_id] = f"{channel} (in section)"
        return held

    @property
    def graph(self) -> str:
        """The graph drawn by the widget and the snapshot (``lineage`` or ``definition``)."""
        return self._graph

    @graph.setter
    def graph(self, kind: str) -> None:
        self._graph = _check_graph(kind)
        self._moved(self.index)

    @property
    def collapse_at(self) -> int | str | None:
        """How the lineage graph groups same-type siblings: ``"auto"``, None or a size."""
        return self.pictures.collapse_at

    @collapse_at.setter
    def collapse_at(self, value: int | str | None) -> None:
        self.pictures.set_collapse(value)
        self._moved(self.index)

    # ---------------------------------------------------------------- pictures
    def focus(self) -> Focus | None:
        """The focus neighbourhood at the cursor: what every view shows with Focus on.

        The lineage node the selected event is about (an execution, or the Flow start, an RPC
        or the end), its parents and children and its message partners; None when the event
        is about no node.
        """
        from dexviz.replay.highlight import selected_node

        node = selected_node(self.event)
        if node is None:
            return None
        try:
            return self.pictures.focus(self.event.run_id, node)
        except KeyError:
            return None

    def graph_classes(self, kind: str | None = None, *, focus: bool = False) -> dict[str, str]:
        """The highlight classes added to SVG groups at the cursor: ``{svg id: classes}``.

        Needs no Graphviz: tests and tools can ask what is highlighted without rendering.
        With ``focus``, the lineage graph's are those of the focus picture (see ``focus_svg``)
        and the definition graph's mark the Steps, Channels and edges outside the focus
        ``dx-unfocused`` (the Channel stubs beside publishing Steps exist only in the
        rendered SVG, ``graph_svg``, which dims them too).

        Raises:
            GraphUnavailable: (definition with ``focus``) no Flow source is known.
        """
        marks = self.state.marks()
        around = self.focus() if focus else None
        if _check_graph(kind or self._graph) == "lineage":
            if around is not None:
                return self.pictures.focus_classes(self.event.run_id, marks, around.centre)
            return self.pictures.lineage_classes(self.event.run_id, marks)
        return self.pictures.definition_classes(marks, around)

    def highlighted(self, kind: str | None = None) -> tuple[str, ...]:
        """The SVG ids of the nodes marked ``dx-selected`` at the cursor."""
        return tuple(i for i, c in self.graph_classes(kind).items()
                     if "dx-selected" in c.split())

    def graph_svg(self, kind: str | None = None, *, focus: bool = False) -> str:
        """The graph as inline SVG with the cursor's executions highlighted.

        With ``focus``, the lineage graph is the focus picture (``focus_svg``) and the
        definition graph dims the Steps, Channels and edges outside the focus.

        Raises:
            GraphUnavailable: Graphviz is missing, (definition) no Flow source is known, or
                (lineage with ``focus``) the event is about no lineage node.
        """
        marks = self.state.marks()
        if _check_graph(kind or self._graph) == "lineage":
            if focus:
                return self.focus_svg()
            return self.pictures.lineage_svg(self.event.run_id, marks)
        return self.pictures.definition_svg(marks, self.focus() if focus else None)

    def focus_svg(self) -> str:
        """The selected execution's neighbourhood in the lineage graph, uncollapsed, as SVG.

        The execution (or the source or end node) the cursor's event is about, its parents
        and children and its message partners, drawn at natural size.

        Raises:
            GraphUnavailable: Graphviz is missing, or the event is about no lineage node.
        """
        from dexviz.replay.highlight import selected_node

        node = selected_node(self.event)
        if node is None:
            raise GraphUnavailable("this event is about no execution: nothing to focus on")
        return self.pictures.focus_svg(self.event.run_id, self.state.marks(), node)

    def timeline(self, *, focus: bool = False) -> TimelinePicture:
        """The cursor run's timeline picture (SVG and its time axis), drawn once per shape.

        With ``focus``, only the focus neighbourhood's executions have lanes (on the whole
        run's time axis); the whole timeline when the event is about no execution.

        Raises:
            GraphUnavailable: matplotlib is missing.
        """
        around = self.focus() if focus else None
        if around is not None:
            return self.pictures.focus_timeline(self.event.run_id, around)
        return self.pictures.timeline(self.event.run_id)

    def timeline_cursor(self, *, focus: bool = False) -> str:
        """The CSS placing the timeline's cursor at the selected event's time.

        Raises:
            GraphUnavailable: matplotlib is missing.
        """
        return self.timeline(focus=focus).cursor_css(self.event.time_ns)


def _check_graph(kind: str) -> str:
    if kind not in GRAPH_KINDS:
        raise ValueError(f"graph must be one of {list(GRAPH_KINDS)}, got {kind!r}")
    return kind

