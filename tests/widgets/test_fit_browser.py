"""The Debugger's Fit fits: the whole graph is visible, the side panels stay in their column,
and where text would fall below 9 px the picture says so and names the readable zoom.

The static snapshot's fragment (what a notebook output shows beside the widget, with the same
stylesheet and the same fitted SVG) is opened in Chromium inside an output area 1032 px wide
(a normal JupyterLab layout) and 1400 px wide, for runs of 1, about 4, 25 and 99 executions,
with the lineage and the definition graph.
"""

from __future__ import annotations

import pytest

from dexviz.replay.focus import MIN_TEXT_PX
from dexviz.widgets import Debugger
from tests.widgets.browser_pages import chromium, each, in_output
from tests.widgets.helpers import TOKEN
from tests.widgets.test_timeline_text import chain, reviews

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUTPUT_PX = (1032, 1400)

_MEASURE = """() => {
  const box = document.querySelector('.dx-graph');
  const svg = box.querySelector('svg');
  const b = box.getBoundingClientRect(), s = svg.getBoundingClientRect();
  const sizes = Array.from(svg.querySelectorAll('text'))
    .filter((t) => t.textContent.trim() && t.getBBox().width > 0)
    .map((t) => { const m = t.getScreenCTM();
                  return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); });
  const note = box.querySelector('.dx-small-text');
  const main = document.querySelector('.dx-main').getBoundingClientRect();
  const right = document.querySelector('.dx-right').getBoundingClientRect();
  const panels = Array.from(document.querySelectorAll('.dx-panel'))
    .filter((p) => p.scrollWidth > p.clientWidth + 1)
    .map((p) => (p.querySelector('.dx-title') || p).textContent.slice(0, 40));
  return {inside: s.left >= b.left - 1 && s.right <= b.right + 1 && s.top >= b.top - 1,
          scrolls: box.scrollWidth > box.clientWidth + 1,
          smallest: Math.min(...sizes),
          note: note !== null && getComputedStyle(note).display !== 'none',
          panels: panels, columnOut: right.right > main.right + 1};
}"""

RUNS = {
    "1 execution": lambda: Debugger(chain(1)),
    "4 executions": lambda: Debugger(reviews(1), token_channel=TOKEN),
    "25 executions": lambda: Debugger(reviews(8), token_channel=TOKEN, collapse_at=None),
    "99 executions": lambda: Debugger(reviews(33), token_channel=TOKEN, collapse_at=None),
}


@pytest.mark.parametrize("graph", ["lineage", "definition"])
@pytest.mark.parametrize("name", list(RUNS))
def test_fit_shows_the_whole_graph_and_says_when_text_is_small(name, graph, tmp_path):
    debugger = RUNS[name]()
    debugger.graph = graph
    debugger.seek(len(debugger) // 2)
    fragment = debugger.snapshot(zoom="fit").split("<body>", 1)[1].split("</body>", 1)[0]
    style = debugger.snapshot(zoom="fit").split("<style>", 1)[1].split("</style>", 1)[0]
    with chromium() as browser:
        found = each(browser, lambda width: in_output([f"<style>{style}</style>{fragment}"],
                                                      width), tmp_path / "fit.html",
                     OUTPUT_PX, _MEASURE)
    for width, seen in found.items():
        where = f"{name}, {graph} graph, {width} px output"
        assert seen["inside"] and not seen["scrolls"], f"{where}: the graph is cut: {seen}"
        assert seen["note"] == (seen["smallest"] < MIN_TEXT_PX - 0.05), f"{where}: {seen}"
        assert not seen["panels"], f"{where}: panels scroll sideways: {seen['panels']}"
        assert not seen["columnOut"], f"{where}: the side column overflows"
