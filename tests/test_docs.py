"""The documentation: its Python examples run, its navigation is complete, the site is offline.

``make docs`` builds the site with ``mkdocs build --strict`` (broken links and references fail)
and then runs ``scripts/check_site.py``; these tests check what the build cannot: that every
```` ```python ```` example in the pages runs as written (one namespace per page, in a fresh
folder; a snippet that only works inside a notebook is fenced ```` ```ipython ```` instead and is
shown, not run), and that the offline check itself catches a page that loads something from
the network.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.parts)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _check_site():
    spec = importlib.util.spec_from_file_location("check_site", REPO_ROOT / "scripts" /
                                                  "check_site.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.requires_dot
@pytest.mark.parametrize("page", [pytest.param(p, id=p.relative_to(DOCS).as_posix())
                                  for p in PAGES if PYTHON_BLOCK.search(p.read_text())])
def test_the_python_examples_of_each_page_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for number, block in enumerate(PYTHON_BLOCK.findall(page.read_text()), start=1):
        code = compile(block, f"{page.name} example {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own examples


def test_every_guide_and_tutorial_is_in_the_navigation_and_every_entry_exists():
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    entries = re.findall(r":\s+(\S+\.(?:md|ipynb))\s*$", config, re.M)
    for entry in entries:
        base = REPO_ROOT if entry.startswith("notebooks/") else DOCS
        assert (base / entry).is_file(), f"mkdocs.yml names a missing page: {entry}"
    guides = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*/*.md")}
    notebooks = {f"notebooks/{p.name}" for p in (REPO_ROOT / "notebooks").glob("*.ipynb")}
    assert guides | notebooks <= set(entries), (guides | notebooks) - set(entries)


def test_the_how_to_guides_cover_each_task():
    names = {p.stem for p in (DOCS / "how-to").glob("*.md")}
    assert names >= {"draw-a-flow", "check-a-critical-section", "debug-a-failing-run",
                     "resume-a-durable-run", "explore-interleavings", "share-a-run"}


def test_the_offline_check_flags_what_a_page_would_fetch(tmp_path):
    check_site = _check_site()
    (tmp_path / "index.html").write_text(
        '<a href="https://example.org/">a link is fine</a>'
        '<svg xmlns="http://www.w3.org/2000/svg"></svg>', encoding="utf-8")
    assert check_site.main([str(tmp_path)]) == 0
    (tmp_path / "page.html").write_text(
        '<script src="https://unpkg.com/iframe-worker/shim"></script>'
        '<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Roboto">',
        encoding="utf-8")
    (tmp_path / "extra.css").write_text("@import url('https://cdn.example/x.css');")
    found = check_site.remote_loads(tmp_path)
    assert [page for page, _ in found] == ["extra.css", "page.html", "page.html"]
    assert check_site.main([str(tmp_path)]) == 1


def test_every_code_fence_of_the_docs_closes():
    assert _check_site().unclosed_fences(DOCS) == []


def test_the_fence_check_flags_a_fence_that_never_closes(tmp_path):
    check = _check_site()
    assert check.unclosed_fence("```python\nx = 1\n```\ntext\n") is None
    assert check.unclosed_fence("intro\n```python\nx = 1\n``` and more text\n") == 2
    assert check.unclosed_fence("````md\n```python\n```\n````\n") is None
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n~~~sh\nls\n", encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>ok</p>", encoding="utf-8")
    assert check.main([str(tmp_path / "site"), str(tmp_path / "docs")]) == 1


def test_the_offline_check_needs_a_built_site(tmp_path):
    assert _check_site().main([str(tmp_path)]) == 1
