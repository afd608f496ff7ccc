"""The report's lineage graph has the widget's Fit / 1:1 / 2× (Chromium).

Before, the page only ever shrank a wide graph to its box (5-6 px text) with no way to zoom.
"""

from __future__ import annotations

import pytest

from dexviz.report import report_html
from tests.widgets.browser_pages import chromium
from tests.widgets.helpers import TOKEN
from tests.widgets.test_timeline_text import reviews

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.requires_dot]

_GRAPH = """() => {
  const box = Array.from(document.querySelectorAll('.dx-graph'))
    .find((b) => b.offsetParent !== null && b.querySelector('svg'));
  const svg = box.querySelector('svg'), b = box.getBoundingClientRect();
  const s = svg.getBoundingClientRect();
  const note = box.querySelector('.dx-small-text');
  return {width: s.width, natural: svg.width.baseVal.value, inside: s.right <= b.right + 1,
          note: note !== null && getComputedStyle(note).display !== 'none'};
}"""


def test_the_report_graph_zooms_fit_natural_and_double(tmp_path):
    path = tmp_path / "report.html"
    path.write_text(report_html(reviews(33), token_channel=TOKEN, collapse_at=None),
                    encoding="utf-8")
    seen = {}
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(path.as_uri())
        for zoom in ("fit", "full", "double", "fit"):
            page.click(f'button[data-zoom="{zoom}"]')
            seen[zoom] = page.evaluate(_GRAPH)
        page.close()
    fit, full, double = seen["fit"], seen["full"], seen["double"]
    assert fit["inside"] and fit["width"] < full["natural"], seen
    assert fit["note"], "a wide graph fitted below 9 px text says so"
    assert abs(full["width"] - full["natural"]) < 2 and not full["inside"], seen
    assert abs(double["width"] - 2 * full["natural"]) < 3, seen
