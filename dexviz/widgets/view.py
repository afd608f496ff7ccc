"""The ipywidgets binding of a Debugger: controls call the model, panels show its state.

Nothing here computes state: buttons, the slider and the dropdowns call ``Debugger`` methods,
and one listener redraws the panels whenever the model moves (also when a notebook cell calls
``dbg.next()``). Every panel is an ``HTML`` widget (no ``Output``), so tests read ``.value``.
Layout: transport and search controls on top, the highlighted graph on the left, the panels on
the right, the timeline with its cursor below.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html import escape
from typing import TYPE_CHECKING, Any

from dexviz._optional import require
from dexviz.history import EventKind
from dexviz.replay.frame import heading_html, panels_at
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.theme import CSS, LEGEND
from dexviz.widgets.snapshot import compare_block, graph_html

if TYPE_CHECKING:
    from dexviz.replay.session import Replay

__all__ = ["SPEEDS", "DebuggerView"]

SPEEDS: tuple[tuple[str, int], ...] = (("0.5×", 1200), ("1×", 600), ("2×", 300), ("4×", 150),
                                       ("10×", 60))
"""Play speeds: label and milliseconds per event."""

_VIEWS = itertools.count(1)


class DebuggerView:
    """The widget tree of one Debugger; ``root`` is what a notebook displays.

    Attributes:
        debugger: The model the controls drive.
        root: The outer ``VBox`` (CSS class ``dexviz-debugger``).
        play, slider, speed: Playback (``Play`` and ``IntSlider`` are linked in the browser).
        first, prev, next, last: Navigation buttons.
        find_kind, find_execution, find_prev, find_next: Jump to an event kind or execution.
        breakpoint, run_to, continue_: Run to a breakpoint (Step type or event kind).
        step, fail_step, fail, cancel_execution, cancel: Live controls (live mode only).
        graph_choice, zoom, groups, graph, legend: The graph, which one is shown, at what
            size (fit, focus, 1:1, 2×; focus also narrows the timeline), and whether a
            fan-out's groups are expanded.
        heading, message, compare, detail, channels, attributes, active, events: Panels.
        timeline, timeline_cursor, timeline_box: The timeline (sent once per shape) and the
            CSS rule placing its cursor (rewritten per step), in an Accordion.
    """

    def __init__(self, debugger: Replay) -> None:
        self.debugger = debugger
        self._w = require("ipywidgets", "notebook")
        self._busy = False
        self._choices_for = -1
        self._uid = next(_VIEWS)
        self._timeline_shown: object = None
        self._build_controls()
        self._build_panels()
        self.root = self._layout()
        self._bind()
        debugger.observe(self.refresh)
        self.refresh()

    # ---------------------------------------------------------------- building
    def _button(self, description: str, tooltip: str, icon: str = "",
                style: str = "") -> Any:
        return self._w.Button(description=description, tooltip=tooltip, icon=icon,
                              button_style=style, layout=self._w.Layout(width="auto"))

    def _build_controls(self) -> None:
        w, last = self._w, len(self.debugger) - 1
        self.play = w.Play(value=0, min=0, max=last, step=1, interval=SPEEDS[1][1],
                           description="Play", show_repeat=False)
        self.slider = w.IntSlider(value=0, min=0, max=last, description="event",
                                  continuous_update=True, readout=True,
                                  layout=w.Layout(flex="1 1 auto", min_width="240px"))
        w.jslink((self.play, "value"), (self.slider, "value"))
        self.speed = w.Dropdown(options=SPEEDS, value=SPEEDS[1][1], description="speed",
                                layout=w.Layout(width="150px"))
        self.first = self._button("", "first event", "fast-backward")
        self.prev = self._button("Prev", "previous event", "step-backward")
        self.next = self._button("Next", "next event", "step-forward")
        self.last = self._button("", "last event", "fast-forward")
        self.find_kind = w.Dropdown(description="jump to", layout=w.Layout(width="300px"))
        self.find_execution = w.Dropdown(layout=w.Layout(width="240px"))
        self.find_prev = self._button("", "previous matching event", "chevron-left")
        self.find_next = self._button("", "next matching event", "chevron-right")
        self.breakpoint = w.Dropdown(description="break at", layout=w.Layout(width="320px"))
        self.run_to = self._button("Run to", "run to the next event matching the breakpoint",
                                   "forward")
        self.continue_ = self._button("Continue", "run to the next breakpoint or the end",
                                      "play-circle")
        self.step = self._button("Step", "run one engine unit", "step-forward", "primary")
        self.fail_step = w.Dropdown(description="fail", layout=w.Layout(width="270px"))
        self.fail = self._button("Fail next attempt", "make the next Execute attempt of this "
                                 "Step fail", "bolt", "warning")
        self.cancel_execution = w.Dropdown(description="cancel", layout=w.Layout(width="290px"))
        self.cancel = self._button("Cancel", "cancel this execution now", "ban", "danger")
        self.graph_choice = w.ToggleButtons(options=[("Lineage", "lineage"),
                                                     ("Definition", "definition")],
                                            value=self.debugger.graph)
        self.zoom = w.ToggleButtons(
            options=[("Fit", "fit"), ("Focus", "focus"), ("1:1", "full"), ("2×", "double")],
            value="fit", style={"button_width": "60px"},
            tooltips=["the whole graph in the panel (a note says when its text is below 9 px)",
                      "the selected execution and its neighbours, in the graph and the "
                      "timeline", "natural size", "twice the natural size"])
        self.groups = w.ToggleButtons(
            options=[("Grouped", "auto"), ("Expanded", "none")],
            value="auto" if self.debugger.collapse_at is not None else "none",
            style={"button_width": "96px"},
            tooltips=["a fan-out's same-Step executions as one node with a count",
                      "every execution its own node"])

    def _build_panels(self) -> None:
        w = self._w
        self.style = w.HTML(f"<style>{CSS}</style>")
        self.heading = w.HTML()
        self.compare = w.HTML()  # compare mode: run a and run b side by side
        self.message = w.HTML()
        self.graph = w.HTML(layout=w.Layout(width="100%"))
        self.legend = w.HTML(LEGEND)
        self.detail, self.channels = w.HTML(), w.HTML()
        self.attributes, self.active = w.HTML(), w.HTML()
        self.events = w.Select(options=[], rows=9, description="",
                               layout=w.Layout(width="100%"))
        self.timeline = w.HTML(layout=w.Layout(width="100%"))
        self.timeline_cursor = w.HTML()
        self.timeline_box = w.Accordion(children=[w.VBox([self.timeline_cursor, self.timeline])],
                                        selected_index=0)
        self.timeline_box.set_title(0, "Timeline")

    def _row(self, *items: Any) -> Any:
        return self._w.HBox(list(items), layout=self._w.Layout(
            align_items="center", flex_flow="row wrap"))

    def _layout(self) -> Any:
        w, row = self._w, self._row
        rows = [self.style, self.heading,
                row(self.first, self.prev, self.play, self.next, self.last, self.slider,
                    self.speed),
                row(self.find_kind, self.find_execution, self.find_prev, self.find_next,
                    self.breakpoint, self.run_to, self.continue_)]
        if self.debugger.live:
            rows.append(row(self.step, self.fail_step, self.fail, self.cancel_execution,
                            self.cancel))
        rows += [self.message, self.compare]
        # Below ~1070 px the panels wrap under the graph: it gets the width, they their names.
        left = w.VBox([self._row(self.graph_choice, self.zoom, self.groups), self.graph,
                       self.legend],
                      layout=w.Layout(flex="3 1 0", min_width="min(560px, 100%)"))
        events_title = w.HTML('<div class="dx-title">Events</div>')
        right = w.VBox([self.detail, self.channels, self.attributes, self.active,
                        events_title, self.events],
                       layout=w.Layout(flex="2 1 0", min_width="min(500px, 100%)",
                                       max_width="580px", margin="0 0 0 12px"))
        rows += [w.HBox([left, right], layout=w.Layout(align_items="flex-start",
                                                        flex_flow="row wrap")),
                 self.timeline_box]
        root = w.VBox(rows, layout=w.Layout(width="100%"))
        root.add_class("dexviz-debugger")
        return root

    # ---------------------------------------------------------------- binding
    def _bind(self) -> None:
        d = self.debugger
        clicks: dict[Any, Callable[[], object]] = {
            self.first: d.first, self.prev: d.prev, self.next: d.next, self.last: d.last,
            self.find_prev: lambda: self._find(backward=True),
            self.find_next: lambda: self._find(backward=False),
            self.run_to: lambda: d.run_to(self.breakpoint.value) if self.breakpoint.value
            else d.continue_(),
            self.continue_: d.continue_, self.step: d.step,
            self.fail: lambda: d.fail_next(self.fail_step.value) if self.fail_step.value else None,
            self.cancel: lambda: d.cancel(self.cancel_execution.value)
            if self.cancel_execution.value else None,
        }
        for button, action in clicks.items():
            button.on_click(self._action(action))
        self.slider.observe(self._on_index, names="value")
        self.events.observe(self._on_index, names="value")
        self.speed.observe(self._on_speed, names="value")
        self.graph_choice.observe(self._on_graph, names="value")
        self.zoom.observe(self._on_zoom, names="value")
        self.groups.observe(self._on_groups, names="value")
        self.timeline_box.observe(lambda _: self._draw_timeline(), names="selected_index")

    def _action(self, action: Callable[[], object]) -> Callable[[Any], None]:
        def clicked(_: Any) -> None:
            try:
                action()
            except Exception as error:  # noqa: BLE001 - shown in the panel, not lost in a log
                self.message.value = (f'<div class="dx-message" style="color:#b91c1c">'
                                      f"{escape(type(error).__name__)}: {escape(str(error))}"
                                      "</div>")
        return clicked

    def _find(self, *, backward: bool) -> bool:
        kind = self.find_kind.value or None
        execution = self.find_execution.value or None
        return self.debugger.jump(kind=kind, execution_id=execution, backward=backward)

    def _on_index(self, change: dict[str, Any]) -> None:
        if not self._busy and isinstance(change["new"], int) and change[
                "new"] != self.debugger.index:
            self.debugger.seek(change["new"])

    def _on_speed(self, change: dict[str, Any]) -> None:
        self.play.interval = int(change["new"])

    def _on_zoom(self, _: object) -> None:
        # Focus applies to the graph and the timeline alike.
        self._draw_graph()
        self._draw_timeline()

    def _on_groups(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self.debugger.collapse_at = "auto" if change["new"] == "auto" else None

    def _on_graph(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self.debugger.graph = str(change["new"])

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        self._busy, before = True, self._busy
        try:
            yield
        finally:
            self._busy = before

    # ---------------------------------------------------------------- drawing
    def refresh(self, _: object = None) -> None:
        """Redraw every control and panel from the model (the model's listener)."""
        d = self.debugger
        with self._quiet():
            self._sync_controls()
        self.heading.value = heading_html(d)
        self.compare.value = compare_block(d)
        self._draw_graph()
        panels = (self.detail, self.channels, self.attributes, self.active)
        for panel, html in zip(panels, panels_at(d), strict=True):
            panel.value = html
        self.message.value = f'<div class="dx-message">{escape(d.message)}</div>'
        self._draw_timeline()

    def _draw_graph(self) -> None:
        self.graph.value = graph_html(self.debugger, zoom=self.zoom.value)

    def _draw_timeline(self) -> None:
        # The picture is sent once per shape; each step only rewrites the cursor's CSS rule.
        if self.timeline_box.selected_index != 0:
            return
        d = self.debugger
        focus = self.zoom.value == "focus"
        try:
            picture = d.timeline(focus=focus)
        except GraphUnavailable as error:
            self.timeline.value = f'<p class="dx-hint">{escape(str(error))}</p>'
            self._timeline_shown = None
            return
        scope = f"dx-tl-{self._uid}"
        if picture is not self._timeline_shown:
            self.timeline.value = f'<div class="dx-timeline {scope}">{picture.html()}</div>'
            self._timeline_shown = picture
        self.timeline_cursor.value = (f"<style>.dexviz-debugger .{scope} .dx-cursor "
                                      f"{{{picture.cursor_css(d.event.time_ns)}}}"
                                      f"{picture.selected_css(scope, d.event.execution_id)}"
                                      "</style>")

    def _sync_controls(self) -> None:
        d, last = self.debugger, len(self.debugger) - 1
        if self._choices_for != len(d):
            self.play.max = self.slider.max = last
            self._sync_choices()
            self._choices_for = len(d)
        if len(self.events.options) != len(d):
            self.events.options = [(label, i) for i, label in enumerate(d.index_.labels)]
        self.slider.value = self.play.value = d.index
        self.events.value = d.index
        self.graph_choice.value = d.graph
        self.prev.disabled = self.first.disabled = d.index == 0
        self.next.disabled = self.last.disabled = d.at_end
        if d.live:
            actives = d.state_at(last).active_executions
            self.cancel_execution.options = [a.execution_id for a in actives]

    def _sync_choices(self) -> None:
        d = self.debugger
        kinds = list(d.index_.kinds)
        steps = _step_types(d)
        choices = {
            self.find_kind: [("(any event kind)", "")] + [(k, k) for k in kinds],
            self.find_execution: [("(any execution)", "")] + [
                (e, e) for e in d.index_.executions],
            self.breakpoint: ([("(breakpoints set in code)", "")]
                              + [(f"Step {s}", s) for s in steps]
                              + [(f"event {k.value}", k.value) for k in EventKind]),
            self.fail_step: [(s, s) for s in steps],
        }
        for dropdown, options in choices.items():
            before = dropdown.value
            dropdown.options = options
            values = [value for _, value in options]
            dropdown.value = before if before in values else (values[0] if values else None)


def _step_types(debugger: Replay) -> list[str]:
    declared = [str(s.get("step_type")) for s in debugger.history.flow_spec.get("steps") or ()
                if isinstance(s, dict)]
    return list(dict.fromkeys(declared + list(debugger.index_.step_types)))

