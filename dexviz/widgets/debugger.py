"""``Debugger``: step through a Flow's execution in a notebook, as an API, a widget or HTML.

>>> run = dexviz.simulate(ContractEditFlow(), sample_edits(4))      # doctest: +SKIP
>>> dbg = Debugger(run.history, token_channel="contractEditToken")  # doctest: +SKIP
>>> dbg.jump(kind="MessageConsumed"); dbg.state.holder_of("contractEditToken")  # doctest: +SKIP
>>> dbg                      # in a notebook: the widget (or the static snapshot)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dexviz.history.output_files import write_output_text
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.model import HistorySource
from dexviz.replay.session import GRAPH_KINDS, Replay

if TYPE_CHECKING:
    from dexviz.replay.paired import Paired
    from dexviz.viz.diff_view import RunDiff
    from dexviz.widgets.view import DebuggerView

__all__ = ["GRAPH_KINDS", "Debugger", "GraphUnavailable"]

_WIDGET = "application/vnd.jupyter.widget-view+json"


class Debugger(Replay):
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
        compare: A second run to step together with this one (compare mode): anything
            ``dexviz.diff`` accepts (a History, a SimulationRun, a history file, a SQLite
            store path or a ``(store, flow_id)`` pair). Its cursor follows this one's to the
            aligned event (``compared``); the widget and the snapshot show both states side
            by side with the differing executions and the difference at the cursor. A live
            run is diffed again whenever it grows.

    Raises:
        ValueError: an empty history, a live-mode Engine, an unknown Flow or graph, a
            ``token_channel`` the Flow does not declare (with a "did you mean"), or a
            ``compare`` run that cannot be loaded (the message names ``compare=``).
        TypeError: ``source`` is not a History, SimulationRun or Engine.
    """

    def __init__(self, source: HistorySource, *, flow_id: str | None = None,
                 flow_source: object | None = None, collapse_at: int | str | None = "auto",
                 token_channel: str | None = None, graph: str = "lineage",
                 compare: object | None = None) -> None:
        super().__init__(source, flow_id=flow_id, flow_source=flow_source,
                         collapse_at=collapse_at, token_channel=token_channel, graph=graph)
        self._view: DebuggerView | None = None
        self._paired: Paired | None = None
        if compare is not None:
            self._paired = _paired(self, compare, collapse_at)
            self.observe(self._follow)
            self._follow()

    # ---------------------------------------------------------------- compare mode
    @property
    def compared(self) -> Replay | None:
        """Run b's replay in compare mode (its cursor at the aligned event), else None."""
        return self._paired.other if self._paired is not None else None

    @property
    def paired(self) -> Paired | None:
        """Compare mode's pairing (run b's replay and the RunDiff), else None."""
        return self._paired

    @property
    def run_diff(self) -> RunDiff | None:
        """Compare mode's RunDiff of this run (a) and the compared one (b), else None."""
        return self._paired.diff if self._paired is not None else None

    def _follow(self, _: object = None) -> None:
        paired = self._paired
        if paired is None:
            return
        if paired.size_a != len(self.history):
            # A live run grew: its new events are aligned by diffing it again.
            from dexviz.compare.diffing import diff
            from dexviz.replay.paired import Paired

            history = self.history
            paired = self._paired = Paired.of(diff(history, paired.other.history),
                                              paired.other, len(history))
        paired.follow(self.event)

    # ---------------------------------------------------------------- outputs
    def snapshot(self, path: str | PathLike[str] | None = None, *, zoom: str = "fit") -> str:
        """A static HTML document: the highlighted SVG graph, the panels and the timeline.

        Args:
            path: Also write the document there.
            zoom: The graph's size, as the widget's buttons: ``fit``, ``focus`` (the graph
                and the timeline show the selected execution's neighbourhood), ``full`` or
                ``double``.

        Raises:
            ValueError: an unknown ``zoom``.
        """
        from dexviz.widgets.snapshot import snapshot_html

        html = snapshot_html(self, zoom=zoom)
        if path is not None:
            write_output_text(path, html)
        return html

    def to_html(self, path: str | PathLike[str], *, start: int = -1) -> Path:
        """Write the run as one self-contained HTML replay file and return its path.

        The page replays every event offline with this debugger's settings (token Channel,
        Flow source, collapsing, graph); this debugger's cursor does not move.

        Args:
            path: The ``.html`` file to write.
            start: The event shown before any script runs (default: the last one).
        """
        from dexviz.report import write_report

        return write_report(self, path, start=start)

    @property
    def widget(self) -> Any:
        """The ipywidgets container bound to this debugger (built on first use).

        Raises:
            MissingExtraError: ipywidgets is not installed (``pip install "dexviz[notebook]"``).
        """
        if self._view is None:
            from dexviz.widgets.view import DebuggerView

            self._view = DebuggerView(self)
        return self._view.root

    @property
    def view(self) -> DebuggerView:
        """The widget binding (its controls and panels), built on first use."""
        self.widget  # noqa: B018 - builds the view
        assert self._view is not None
        return self._view

    def _repr_mimebundle_(self, include: Iterable[str] | None = None,
                          exclude: Iterable[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        """Notebook display: the widget (when ipywidgets is available) and the static snapshot.

        The ``text/html`` snapshot (graph, panels at the cursor, timeline) rides beside the
        widget, so a notebook saved and rendered without a kernel (nbconvert, nbviewer, GitHub)
        still shows the debugger as it was displayed; front ends with a widget manager show
        the widget.
        """
        from dexviz.widgets.snapshot import snapshot_html

        try:
            root = self.widget
        except ImportError:
            root = None
        bundle: dict[str, Any] = {}
        if root is not None:
            shown = root._repr_mimebundle_(include=include, exclude=exclude, **kwargs)
            if isinstance(shown, dict) and _WIDGET in shown:
                bundle = shown
        bundle["text/html"] = snapshot_html(self, document=False)
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        event = self.event
        return (f"Debugger(flow_id={self.flow_id!r}, mode={self.mode!r}, "
                f"event={self.index + 1}/{len(self)}, at={event.describe()!r})")


def _paired(debugger: Debugger, compare: object, collapse_at: int | str | None) -> Paired:
    """Load the ``compare=`` run, diff it against ``debugger``'s, and pair a replay of it."""
    from dexviz.compare.diffing import diff
    from dexviz.compare.run_sources import load_history
    from dexviz.replay.paired import Paired

    try:
        other = load_history(compare)
        run_diff = diff(debugger.history, other)
        replay = Replay(other, collapse_at=collapse_at)
    except (TypeError, ValueError, OSError) as error:
        raise ValueError(f"Debugger(compare=...): cannot load the run to compare "
                         f"({type(compare).__name__} {_shown(compare)}): {error}") from error
    return Paired.of(run_diff, replay, len(debugger.history))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
