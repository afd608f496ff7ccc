"""``dexviz report`` / ``dexviz history`` on Dex histories saved from Dex Web or dexcli."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dexviz
from dexviz import cli
from tests.dex_support import RUN_2, continue_as_new_chain, contract_edit_run, to_dexcli
from tests.report.pages import island

SHIPPED = Path(__file__).resolve().parents[2] / "dexviz" / "examples" / (
    "contract_edit_dex_history.json")


def _save(tmp_path: Path, value: object, name: str = "history.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_shipped_fixture_is_the_wire_built_run() -> None:
    assert json.loads(SHIPPED.read_text(encoding="utf-8")) == contract_edit_run().page()


@pytest.mark.parametrize("shape", ["web", "dexcli"])
def test_report_recognises_a_dex_history_by_content(tmp_path: Path, shape: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    events = contract_edit_run().events
    value = contract_edit_run().page() if shape == "web" else to_dexcli(events)
    path = _save(tmp_path, value, "saved.txt")
    out = tmp_path / "replay.html"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    assert len(island(out.read_text(encoding="utf-8"))["events"]) == 59
    assert f"wrote {out} (" in capsys.readouterr().out


def test_report_out_may_be_a_folder(tmp_path: Path) -> None:
    path = _save(tmp_path, contract_edit_run().page())
    assert cli.main(["report", str(path), "--out", str(tmp_path / "reports")]) == 0
    assert (tmp_path / "reports" / "contract-7.html").is_file()


def test_report_of_one_run_of_a_chain(tmp_path: Path) -> None:
    path = _save(tmp_path, continue_as_new_chain())
    out = tmp_path / "second.html"
    assert cli.main(["report", str(path), "--run", RUN_2, "--out", str(out)]) == 0
    second = dexviz.from_dex(continue_as_new_chain(), run_id=RUN_2)
    assert len(island(out.read_text(encoding="utf-8"))["events"]) == len(second) < 40


def test_malformed_dex_history_exits_1_naming_file_and_event(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = contract_edit_run().page()
    page["events"][2]["eventTime"] = "soon"
    path = _save(tmp_path, page)
    assert cli.main(["report", str(path)]) == 1
    assert (f"{path}: event 2: eventTime must be an RFC 3339 time"
            in capsys.readouterr().err)
    assert not path.with_suffix(".html").exists()


def test_history_summarises_a_dex_history_with_the_overlap_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _save(tmp_path, contract_edit_run(extra_token=True).page())
    assert cli.main(["history", str(path), "--channel", "contractEditToken"]) == 1
    out = capsys.readouterr().out
    assert "FAILED, 1 overlapping pair" in out
    assert "OVERLAP EnterContractEdit-3 and EnterContractEdit-1" in out
    # A server run is timed by the wall clock, never a simulation's virtual one.
    assert "(wall clock)" in out and "(virtual)" not in out


def test_run_on_a_dexviz_history_is_a_usage_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _save(tmp_path, {"not": "dex"})
    assert cli.main(["history", str(path), "--run", "r"]) == 2
    assert "is not a Dex history" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "history"])
def test_server_needs_a_flow_and_no_file(tmp_path: Path, command: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([command, "--server", "127.0.0.1:1"]) == 2
    assert "--server needs --flow FLOW_ID" in capsys.readouterr().err
    assert cli.main([command, str(tmp_path / "x.json"), "--server", "h:1", "--flow", "f"]) == 2
    assert "give HISTORY or --server HOST:PORT, not both" in capsys.readouterr().err
    assert cli.main([command]) == 2
    assert "give a HISTORY file, or --server HOST:PORT --flow ID" in capsys.readouterr().err
