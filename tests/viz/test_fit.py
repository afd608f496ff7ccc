"""Pictures fit the notebook's output width, and keep their natural size when saved."""

from __future__ import annotations

import re

import pytest

from dexviz.viz.definition_view import definition_graph
from dexviz.viz.render import FIT_STYLE, fit_svg
from tests.analysis.definition.helpers import CONTRACT_EDIT


def test_fit_svg_adds_the_style_to_the_root_element_only():
    svg = '<?xml version="1.0"?>\n<svg width="1340pt" viewBox="0 0 1340 200"><svg x="1"/></svg>'
    fitted = fit_svg(svg)
    assert fitted.count("max-width") == 1
    assert f'<svg style="{FIT_STYLE}" width="1340pt"' in fitted


def test_fit_svg_extends_an_existing_style():
    fitted = fit_svg('<svg style="color:red" viewBox="0 0 1 1"></svg>')
    assert fitted == f'<svg style="{FIT_STYLE};color:red" viewBox="0 0 1 1"></svg>'
    assert fit_svg("no picture") == "no picture"


@pytest.mark.requires_dot
def test_the_notebook_svg_scales_and_the_saved_one_keeps_its_size(tmp_path):
    view = definition_graph(CONTRACT_EDIT)
    shown = view._repr_mimebundle_()["image/svg+xml"]
    root = re.search(r"<svg\b[^>]*>", shown)
    assert root is not None and "max-width:100%" in root.group(0) and "viewBox" in root.group(0)
    saved = view.save(tmp_path / "g.svg").read_text()
    assert "max-width" not in saved and re.search(r'<svg width="\d+pt"', saved)


@pytest.mark.requires_dot
def test_the_notebook_html_carries_the_same_fitted_svg_inline():
    bundle = definition_graph(CONTRACT_EDIT)._repr_mimebundle_()
    html = bundle["text/html"]
    assert html.startswith('<div class="dexviz-graph"><svg style="max-width:100%;height:auto"')
    assert "<?xml" not in html and "<!DOCTYPE" not in html
    only_svg = definition_graph(CONTRACT_EDIT)._repr_mimebundle_(include=["image/svg+xml"])
    assert set(only_svg) == {"image/svg+xml"}
