"""Static fallbacks: the Debugger's display bundle carries its snapshot beside the widget.

A notebook saved and rendered without a kernel (nbconvert, nbviewer, GitHub) cannot run the
widget; the ``text/html`` snapshot in the same bundle shows the highlighted graph, the panels
at the cursor and the timeline instead. The last test converts tutorial notebook 05, as saved
in the repository, with nbconvert and finds the snapshot in the HTML.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dexviz.widgets import Debugger
from dexviz.widgets.snapshot import snapshot_html
from tests.widgets.helpers import TOKEN, history

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05-debugging.ipynb"
SNAPSHOT = 'class="dexviz-debugger dx-static"'


@pytest.mark.requires_dot
def test_the_widget_bundle_carries_the_snapshot_at_the_cursor():
    pytest.importorskip("ipywidgets")
    debugger = Debugger(history(3), token_channel=TOKEN)
    debugger.seek(6)
    bundle = debugger._repr_mimebundle_()
    assert WIDGET_MIME in bundle
    page = bundle["text/html"]
    assert page == snapshot_html(debugger, document=False)
    assert SNAPSHOT in page and "event 7 / " in page
    assert page.count("<svg") == 2  # the lineage graph and the timeline
    assert re.search(r'<g id="exec:[^"]*" class="[^"]*dx-selected', page)
    for panel in ("dx-detail", "dx-channels", "dx-attributes", "dx-active"):
        assert f'class="dx-panel {panel}"' in page
    assert '<div class="dx-cursor" style="left:' in page


def test_without_graphviz_the_snapshot_explains_instead_of_failing(empty_path):
    pytest.importorskip("ipywidgets")
    bundle = Debugger(history(2))._repr_mimebundle_()
    assert WIDGET_MIME in bundle
    assert SNAPSHOT in bundle["text/html"] and "dx-hint" in bundle["text/html"]


@pytest.mark.notebook
def test_nbconvert_renders_notebook_05_with_the_debugger_snapshot():
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    displays = [output for cell in notebook.cells if cell.cell_type == "code"
                for output in cell.get("outputs", ())
                if "Debugger(" in str(output.get("data", {}).get("text/plain", ""))
                and output.get("output_type") == "execute_result"]
    assert displays, "notebook 05 displays no Debugger"
    body, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    assert body.count(SNAPSHOT) == len(displays)
    static = body[body.index(SNAPSHOT):]
    assert "<svg" in static and 'class="dx-panel dx-channels"' in static
    assert re.search(r'class="dx-timeline(?: dx-tl-[0-9a-f]+)?">', static)
