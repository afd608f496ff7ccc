"""write_run_outputs() and every view built from a history saved, then loaded in a new process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

from dexviz.analysis.concurrency import concurrency
from dexviz.analysis.critical_path import critical_path
from dexviz.analysis.exclusive import exclusive_sections
from dexviz.history import History
from dexviz.viz.execution_view import execution_graph
from dexviz.viz.run_outputs import summarize_run, write_run_outputs
from dexviz.viz.timeline import timeline, timeline_svg
from tests.analysis.factory import early_release_history, overlapping_token_history
from tests.analysis.runs import TOKEN, contract_edit_run

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")


@pytest.mark.requires_dot
def test_contract_edit_outputs_are_written_quickly(tmp_path):
    started = time.perf_counter()
    history = contract_edit_run(11)
    written = write_run_outputs(history, tmp_path / "out", channel=TOKEN)
    elapsed = time.perf_counter() - started
    assert elapsed < 10.0  # the bound for `dexviz demo` (benchmarks measure the rest)
    assert {k: p.name for k, p in written.items()} == {
        "history": "history.jsonl", "graph": "graph.svg", "timeline": "timeline.svg",
        "executions": "executions.csv", "exclusive": "exclusive-sections.txt"}
    assert History.load(written["history"]) == history
    ET.fromstring(written["graph"].read_bytes())
    ET.fromstring(written["timeline"].read_bytes())
    rows = written["executions"].read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("execution_id,step_type,parent") and len(rows) == 26
    assert "OK, no two holdings overlap" in written["exclusive"].read_text(encoding="utf-8")


def test_outputs_are_deterministic_and_fall_back_to_dot_text_without_graphviz(tmp_path,
                                                                               empty_path):
    history = overlapping_token_history()
    first = write_run_outputs(history, tmp_path / "a", channel=TOKEN)
    second = write_run_outputs(history, tmp_path / "b", channel=TOKEN)
    assert first["graph"].name == "graph.dot"
    for key, path in first.items():
        assert path.read_bytes() == second[key].read_bytes(), key
    assert "FAILED, 1 overlapping pair\n" in first["exclusive"].read_text(encoding="utf-8")


def test_summary_names_the_run_and_the_verdict():
    text = str(summarize_run(contract_edit_run(0), channel=TOKEN))
    assert text.startswith("ContractEditFlow run ") and "COMPLETED after 28.000 s" in text
    assert "8 holdings, OK" in text
    assert text.count("  EnterContractEdit-") == 8 and "not shown" not in text


def test_summary_with_max_rows_bounds_the_section_table_but_the_file_keeps_every_row(tmp_path):
    history = contract_edit_run(0)
    text = str(summarize_run(history, channel=TOKEN, max_rows=3))
    assert text.count("  EnterContractEdit-") == 3
    assert text.splitlines()[-1] == "  ... and 5 more holdings not shown"
    written = write_run_outputs(history, tmp_path, channel=TOKEN)
    assert written["exclusive"].read_text(encoding="utf-8").count("  EnterContractEdit-") == 8


_CHILD = textwrap.dedent(
    """
    import json, sys
    from dexviz.history import History
    from dexviz.analysis.concurrency import concurrency
    from dexviz.analysis.critical_path import critical_path
    from dexviz.analysis.exclusive import exclusive_sections
    from dexviz.analysis.state import state_at
    from dexviz.viz.execution_view import execution_graph
    from dexviz.viz.frames import frames
    from dexviz.viz.timeline import timeline, timeline_svg

    history = History.load(sys.argv[1])
    report = exclusive_sections(history, "contractEditToken")
    tables = {name: len(table) for name, table in frames(history).tables()}
    last = state_at(history, -1)
    print(json.dumps({
        "report": str(report),
        "concurrency": concurrency(history).maximum,
        "path": list(critical_path(history).execution_ids),
        "tables": tables,
        "dot": execution_graph(history).to_dot(),
        "svg": timeline_svg(timeline(history, channel="contractEditToken")),
        "closed": last.closed,
        "pyplot": "matplotlib.pyplot" in sys.modules,
    }))
    """
)


def test_every_view_works_on_a_history_loaded_in_a_new_process(tmp_path, repo_root):
    history = contract_edit_run(3)
    path = history.save(tmp_path / "history.jsonl")
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
        cwd=repo_root, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    child = json.loads(result.stdout)
    assert child["report"] == str(exclusive_sections(history, TOKEN))
    assert child["concurrency"] == concurrency(history).maximum
    assert child["path"] == list(critical_path(history).execution_ids)
    assert child["tables"]["executions"] == 25 and child["tables"]["events"] == len(history)
    assert child["dot"] == execution_graph(history).to_dot()
    assert child["svg"] == timeline_svg(timeline(history, channel=TOKEN))
    assert child["closed"] == "COMPLETED"
    assert child["pyplot"] is False  # the timeline never touches pyplot's global state


def test_a_token_given_back_early_is_named_in_the_summary_the_file_and_fails_the_run(tmp_path):
    history = early_release_history()
    summary = summarize_run(history, channel=TOKEN)
    assert not summary.ok and summary.report is not None and summary.report.ok
    line = ("  SECTIONS OVERLAP EnterContractEdit-1 and EnterContractEdit-2: both inside from "
            "2.000 s to 4.000 s (a chain still worked after giving the token back)")
    assert str(summary).splitlines()[-1] == line
    written = write_run_outputs(history, tmp_path, channel=TOKEN)
    assert written["exclusive"].read_text(encoding="utf-8").splitlines()[-1] == line


def test_overlapping_holdings_are_not_repeated_as_overlapping_sections():
    text = str(summarize_run(overlapping_token_history(), channel=TOKEN))
    assert "OVERLAP EnterContractEdit-1 and EnterContractEdit-2" in text
    assert "SECTIONS OVERLAP" not in text


def test_the_history_command_exits_1_when_sections_overlap(tmp_path, capsys):
    from dexviz import cli

    path = early_release_history().save(tmp_path / "history.jsonl")
    assert cli.main(["history", str(path), "--channel", TOKEN]) == 1
    assert "SECTIONS OVERLAP EnterContractEdit-1 and EnterContractEdit-2" in (
        capsys.readouterr().out)
