"""``SimulationRun.to_html``: the run's HTML replay, found through the package's entry point."""

from __future__ import annotations

import importlib.metadata

import pytest

import dexviz
from dexviz.engine.simulate import WRITERS_GROUP
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits


@pytest.mark.requires_dot
def test_to_html_writes_the_same_page_as_the_report_module(tmp_path):
    from dexviz.report import report_html

    run = dexviz.simulate(ContractEditFlow(), sample_edits(3))
    path = run.to_html(tmp_path / "run.html", token_channel="contractEditToken")
    assert path == tmp_path / "run.html"
    assert path.read_text(encoding="utf-8") == report_html(
        run, token_channel="contractEditToken")


def test_the_writer_is_declared_as_an_entry_point():
    points = importlib.metadata.entry_points(group=WRITERS_GROUP, name="html")
    assert [point.value for point in points] == ["dexviz.report:write_report"]


def test_without_the_package_metadata_to_html_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: [])
    run = dexviz.simulate(ContractEditFlow(), sample_edits(1))
    with pytest.raises(RuntimeError, match="install dexviz"):
        run.to_html(tmp_path / "run.html")
    assert not (tmp_path / "run.html").exists()
