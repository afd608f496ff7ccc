"""Rendering DOT with Graphviz, GraphView's save/display, and the no-binary fallbacks."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from dexviz.viz.render import (
    INSTALL_HINT,
    GraphView,
    GraphvizNotInstalledError,
    GraphvizRenderError,
    render,
)

DOT = 'digraph "G" {\n  "a" [id="node:a"];\n  "a" -> "b";\n}\n'


class TinyView(GraphView):
    """A minimal GraphView: the base class's behaviour is what is under test."""

    def to_dot(self) -> str:
        return DOT

    def __repr__(self) -> str:
        return "TinyView()"


@pytest.mark.requires_dot
def test_render_svg_png_pdf():
    svg = render(DOT, "svg")
    root = ElementTree.fromstring(svg)
    assert root.tag.endswith("svg")
    assert b'id="node:a"' in svg
    assert render(DOT, "png").startswith(b"\x89PNG")
    assert render(DOT, "pdf").startswith(b"%PDF")


def test_render_rejects_unknown_formats():
    with pytest.raises(ValueError, match="cannot render 'gif'"):
        render(DOT, "gif")


@pytest.mark.requires_dot
def test_render_reports_dot_errors():
    with pytest.raises(GraphvizRenderError, match="dot failed"):
        render("digraph { a -> }", "svg")


def test_missing_dot_binary_raises_a_specific_error_with_install_hint(empty_path):
    with pytest.raises(GraphvizNotInstalledError) as caught:
        render(DOT, "svg")
    message = str(caught.value)
    assert "apt install graphviz" in message and "brew install graphviz" in message
    assert "conda install" in message and ".to_dot() works without it" in message


def test_mimebundle_without_dot_is_the_dot_text_and_a_one_line_hint(empty_path):
    bundle = TinyView()._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"] == DOT + "\n" + INSTALL_HINT
    assert "\n" not in INSTALL_HINT


def test_save_a_rendered_format_without_dot_raises(empty_path, tmp_path):
    with pytest.raises(GraphvizNotInstalledError):
        TinyView().save(tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()
    TinyView().save(tmp_path / "graph.dot")  # text formats need no binary
    assert (tmp_path / "graph.dot").read_text(encoding="utf-8") == DOT


@pytest.mark.requires_dot
def test_mimebundle_is_svg_plus_text_and_honours_include_and_exclude():
    bundle = TinyView()._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert bundle["text/plain"] == "TinyView()"
    png = TinyView()._repr_mimebundle_(include=["image/png"])
    assert set(png) == {"image/png"}
    assert TinyView()._repr_mimebundle_(exclude=["image/svg+xml", "text/html"]) == {
        "text/plain": "TinyView()"}


@pytest.mark.requires_dot
def test_save_chooses_the_format_from_the_suffix(tmp_path):
    view = TinyView()
    assert view.save(tmp_path / "g.SVG").read_bytes().lstrip().startswith(b"<?xml")
    assert view.save(tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    assert view.save(tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")
    assert view.save(str(tmp_path / "g.gv")).read_text(encoding="utf-8") == DOT


def test_save_rejects_an_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match=r"unknown suffix '\.txt'; use one of \.dot, \.gv, "):
        TinyView().save(tmp_path / "graph.txt")


def test_mimebundle_without_the_graphviz_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)  # import now fails
    bundle = TinyView()._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"].startswith(DOT)
    assert 'pip install "dexviz[graph]"' in bundle["text/plain"]
