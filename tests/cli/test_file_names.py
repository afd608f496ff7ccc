"""File names the CLI meets: names that are not UTF-8, and the file an error is about."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dexviz import cli
from dexviz.examples import contract_edit


@pytest.fixture
def odd_source(tmp_path: Path) -> Path:
    """A copy of the example Flow under a file name whose bytes are not UTF-8."""
    name = os.fsdecode(b"contract\xff.py")  # surrogateescape: the name's odd byte survives
    target = tmp_path / name
    try:
        shutil.copy(contract_edit.__file__, target)
    except (OSError, UnicodeEncodeError) as error:
        pytest.skip(f"this file system refuses non-UTF-8 names: {error}")
    return target


def test_graph_writes_json_for_a_source_whose_name_is_not_utf8(
    odd_source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "graph.json"
    assert cli.main(["graph", str(odd_source), "-o", str(out)]) == 0
    graph = json.loads(out.read_text(encoding="utf-8"))
    assert graph["source"]["path"].endswith("contract\\xff.py")


def test_run_saves_the_history_of_a_source_whose_name_is_not_utf8(
    odd_source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["run", f"{odd_source}:ContractEditFlow", "--input", "[]", "--out", str(out)]
    assert cli.main(args) == 0
    assert cli.main(["history", str(out / "history.jsonl")]) == 0


def test_history_names_the_file_when_its_flow_lacks_the_channel(
    odd_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    cli.main(["run", f"{odd_source}:ContractEditFlow", "--input", "[]", "--out", str(out)])
    capsys.readouterr()
    assert cli.main(["history", str(out / "history.jsonl"), "--channel", "oven"]) == 2
    assert str(out / "history.jsonl") in capsys.readouterr().err
