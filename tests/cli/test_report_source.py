"""``dexviz report`` finds the Flow's source beside the history file, or says ``--source``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dexviz import cli
from tests.report.pages import edited
from tests.widgets.helpers import history

EXAMPLE = Path(__file__).resolve().parents[2] / "dexviz" / "examples" / "contract_edit.py"


def _saved_elsewhere(folder: Path) -> Path:
    """A history whose Flow module (``dxbeside.flows``) Python cannot import from anywhere."""
    events = history(2)
    spec = {**events.flow_spec, "module": "dxbeside.flows", "source_file": "dxbeside/flows.py"}
    return edited(events, str(events[0].kind), flow=spec).save(folder / "run.jsonl")


@pytest.mark.requires_dot
def test_the_source_beside_the_history_file_draws_the_definition(tmp_path, monkeypatch, capsys):
    runs, work = tmp_path / "runs", tmp_path / "work"
    (runs / "dxbeside").mkdir(parents=True)
    work.mkdir()
    shutil.copy(EXAMPLE, runs / "dxbeside" / "flows.py")
    saved = _saved_elsewhere(runs)
    monkeypatch.chdir(work)
    assert cli.main(["report", str(saved), "-o", str(work / "r.html")]) == 0
    page = (work / "r.html").read_text(encoding="utf-8")
    assert 'id="step:EnterContractEdit"' in page
    assert "--source" not in capsys.readouterr().err


def test_without_a_source_the_hint_names_dash_dash_source(tmp_path, monkeypatch, capsys):
    saved = _saved_elsewhere(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", str(saved), "-o", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "pass --source FILE.py" in err and "dxbeside/flows.py" in err
