"""The Debugger's timeline never shows text below 9 px, whatever the panel width or run size.

The timeline SVG fills its panel's width, so its text is ``font-size × rendered width /
viewBox width`` pixels. Its box has a minimum width (the panel scrolls beyond it); these tests
read the sizes back from the HTML the widget, the static snapshot and the replay page show, for
runs of 1, 50 and 500 executions and panels from a phone's width to a wide screen.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from dexviz import Context, Flow, Step, StepDecision, StepList, dead_end, go_to, simulate
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import History
from dexviz.replay.focus import MIN_TEXT_PX
from dexviz.widgets import Debugger
from dexviz.widgets.snapshot import timeline_html
from tests.widgets.helpers import TOKEN

pytest.importorskip("matplotlib")

PANEL_WIDTHS_PX = (240, 480, 800, 1200, 1920)
_VIEWBOX = re.compile(r'<svg\b[^>]*\bviewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_TEXT = re.compile(r"<text\b([^>]*)>")
_FONT_PX = re.compile(r"\bfont(?:-size)?:\s*([\d.]+)px")
_BOX = re.compile(r'<div class="dx-tl"(?: style="min-width:(\d+)px")?>')


class Loop(Step[int]):
    """Goes to itself until the count runs out: one execution per count."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Loop(), n - 1) if n > 1 else dead_end()


class LoopFlow(Flow[int]):
    """A chain of ``n`` Loop executions."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Loop())


@cache
def chain(executions: int) -> History:
    """A finished run of exactly ``executions`` executions, one after the other."""
    return simulate(LoopFlow(), executions, seed=0).history


@cache
def reviews(reviewers: int) -> History:
    """A finished ContractEditFlow run: about three executions per reviewer, one token."""
    return simulate(ContractEditFlow(), sample_edits(reviewers), seed=0).history


def smallest_text_px(html: str, panel_px: float) -> float:
    """The smallest rendered text (px) of the timeline in ``html`` shown in a ``panel_px`` panel.

    The SVG is as wide as its box: the panel's width, or the box's minimum width if larger.
    Only the timeline's box is read (a page also holds graphs).
    """
    box = _BOX.search(html)
    assert box is not None, html[:300]
    html = html[box.start():html.index("</svg>", box.start())]
    view_box = _VIEWBOX.search(html)
    assert view_box is not None
    rendered = max(panel_px, float(box.group(1) or 0))
    sizes = []
    for attributes in _TEXT.findall(html):
        assert "scale(" not in attributes  # only rotations: the font size is the text's size
        found = _FONT_PX.search(attributes)
        assert found is not None, attributes
        sizes.append(float(found.group(1)))
    assert sizes
    return min(sizes) * rendered / float(view_box.group(1))


@pytest.mark.parametrize("executions", [1, 50, 500])
def test_a_chain_of_executions_keeps_its_timeline_text_readable(executions: int):
    debugger = Debugger(chain(executions))
    assert len(debugger.pictures.lineage(debugger.event.run_id).run) == executions
    html = timeline_html(debugger)
    for panel in PANEL_WIDTHS_PX:
        assert smallest_text_px(html, panel) >= MIN_TEXT_PX, (executions, panel)


@pytest.mark.parametrize("zoom", ["fit", "focus", "full", "double"])
@pytest.mark.parametrize("executions", [1, 50, 500])
def test_every_zoom_keeps_the_timeline_text_readable(executions: int, zoom: str):
    debugger = Debugger(reviews(executions // 3 or 1), token_channel=TOKEN)
    for position in (0, len(debugger) // 3, -1):  # the start, a reviewer, the end
        debugger.seek(position)
        html = timeline_html(debugger, zoom=zoom)
        for panel in PANEL_WIDTHS_PX:
            assert smallest_text_px(html, panel) >= MIN_TEXT_PX, (executions, zoom, panel)


@pytest.mark.parametrize("reviewers", [1, 16, 166])
def test_token_holdings_and_their_captions_stay_readable(reviewers: int):
    debugger = Debugger(reviews(reviewers), token_channel=TOKEN)
    debugger.seek(len(debugger) // 2)
    html = timeline_html(debugger)
    assert 'id="holding:' in html
    for panel in PANEL_WIDTHS_PX:
        assert smallest_text_px(html, panel) >= MIN_TEXT_PX, (reviewers, panel)


def test_the_box_is_only_as_wide_as_readable_text_needs():
    html = timeline_html(Debugger(chain(1)))
    box = _BOX.search(html)
    assert box is not None and box.group(1) is not None
    # The smallest text is 7.5 pt over a 792 pt wide figure: 9 px needs 951 px (+1 rounding).
    assert int(box.group(1)) == 952
    assert smallest_text_px(html, 952) == pytest.approx(9.0, abs=0.02)


def test_the_widget_and_the_replay_page_show_the_same_readable_box(tmp_path):
    pytest.importorskip("ipywidgets")
    debugger = Debugger(reviews(4), token_channel=TOKEN)
    widget_html = debugger.view.timeline.value
    assert smallest_text_px(widget_html, 320) >= MIN_TEXT_PX
    page = debugger.to_html(tmp_path / "run.html").read_text(encoding="utf-8")
    assert smallest_text_px(page, 320) >= MIN_TEXT_PX


def test_a_shortened_holder_caption_is_spelled_out_in_the_title():
    from dexviz.viz.timeline import timeline

    figure = timeline(reviews(30), channel=TOKEN)
    captions = {text.get_text() for text in figure.axes[0].texts}
    assert any(caption.startswith("ECE-") for caption in captions), sorted(captions)[:8]
    assert "ECE = EnterContractEdit" in figure.axes[0].get_title(loc="left")
    full = timeline(reviews(2), channel=TOKEN)  # every bar wide enough for its full id
    assert not any("-" in t.get_text() and not t.get_text().startswith("Enter")
                   for t in full.axes[0].texts)
    assert " = " not in full.axes[0].get_title(loc="left")
