"""Every Debugger of a notebook shows its timeline cursor, not only the last one displayed.

Two widgets' HTML outputs (their theme ``<style>``, cursor rule and timeline, in the order
JupyterLab puts them in the page) are opened in Chromium; each cursor must be as tall as its
picture's lanes. Before each widget's rules were scoped, the second widget's theme reset the
first one's cursor to height 0.
"""

from __future__ import annotations

import pytest

from dexviz.widgets import Debugger
from tests.widgets.browser_pages import chromium, in_output, measure
from tests.widgets.helpers import TOKEN, history

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_CURSORS = """() => Array.from(document.querySelectorAll('.dx-cursor'))
    .map((c) => c.getBoundingClientRect().height)"""


def _widget_output(debugger: Debugger) -> str:
    """What one displayed widget puts in the page: its HTML children, in order."""
    view = debugger.view
    return (f'<div class="dexviz-debugger">{view.style.value}{view.heading.value}'
            f"{view.timeline_cursor.value}{view.timeline.value}</div>")


def test_each_debugger_in_a_notebook_shows_its_timeline_cursor(tmp_path):
    pytest.importorskip("ipywidgets")
    first = Debugger(history(3), token_channel=TOKEN)
    second = Debugger(history(4))
    first.seek(len(first) // 2)
    second.seek(len(second) // 3)
    page = in_output([_widget_output(first), _widget_output(second)], 1032)
    with chromium() as browser:
        heights = measure(browser, page, tmp_path / "two.html", 1072, _CURSORS)
    assert len(heights) == 2
    assert all(height > 20 for height in heights), heights
