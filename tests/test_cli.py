"""The dexviz command line: demo and graph, their output, files and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dexviz import cli
from tests.cli.fakes import Record, fake_demo

REPO_ROOT = Path(__file__).resolve().parent.parent
CONTRACT_EDIT = REPO_ROOT / "dexviz" / "examples" / "contract_edit.py"
RECORD_LINE = re.compile(
    r"^  (reviewer-\d+)\s+(saved|failed|withdrawn)\s+(\d+\.\d{3}) s \.\.\s+(\d+\.\d{3}) s$"
)




def run_module(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dexviz", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# ---------------------------------------------------------------------------- parser


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "demo" in out
    assert "graph" in out


def test_no_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main([])
    assert caught.value.code == 2
    assert "required" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_demo_rejects_a_bad_reviewer_count(capsys, value):
    with pytest.raises(SystemExit) as caught:
        cli.main(["demo", "--reviewers", value])
    assert caught.value.code == 2
    assert "--reviewers" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli():
    completed = run_module("--help")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: dexviz")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("flows.py", (Path("flows.py"), None)),
        ("flows.py:OrderFlow", (Path("flows.py"), "OrderFlow")),
        ("dir/a:b/flows.py", (Path("dir/a:b/flows.py"), None)),
        ("dir/flows.py:Flow2", (Path("dir/flows.py"), "Flow2")),
        ("flows.py:", (Path("flows.py:"), None)),
    ],
)
def test_parse_flow_spec(spec, expected):
    assert cli.parse_flow_spec(spec) == expected


# ---------------------------------------------------------------------------- overlap check


def test_touching_intervals_do_not_overlap():
    records = [Record("a", "saved", 0, 4000), Record("b", "saved", 4000, 8000)]
    assert cli.find_overlaps(records) == []


def test_overlapping_saved_intervals_are_reported_once_each():
    a, b, c = (
        Record("a", "saved", 0, 4000),
        Record("b", "saved", 3999, 8000),
        Record("c", "saved", 100, 200),
    )
    assert cli.find_overlaps([b, a, c]) == [(a, c), (a, b)]


def test_only_saved_records_are_compared():
    records = [Record("a", "saved", 0, 4000), Record("b", "failed", 1000, 1000)]
    assert cli.find_overlaps(records) == []


def test_records_are_formatted_relative_to_the_first_start():
    lines = cli.format_records(
        [Record("r-10", "saved", 5000, 9000), Record("r-2", "failed", 1000, 1000)]
    )
    assert lines == [
        "  r-10  saved        4.000 s ..   8.000 s",
        "  r-2   failed       0.000 s ..   0.000 s",
    ]


def test_demo_exits_1_when_saved_edits_overlap(monkeypatch, tmp_path, capsys):
    records = [Record("reviewer-1", "saved", 0, 4000), Record("reviewer-2", "saved", 2000, 6000)]
    monkeypatch.setattr(cli, "_simulate_contract_edits", lambda **_: fake_demo(records))
    assert cli.main(["demo", "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "saved edits overlap: reviewer-1 [0, 4000] and reviewer-2 [2000, 6000]" in captured.err
    assert (tmp_path / "history.jsonl").read_text() == '{"seq": 1}\n'


def test_demo_exits_1_when_the_flow_does_not_complete(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "_simulate_contract_edits", lambda **_: fake_demo([], "FAILED"))
    assert cli.main(["demo", "--out", str(tmp_path)]) == 1
    assert "the Flow ended FAILED, not COMPLETED" in capsys.readouterr().err


def test_demo_reports_an_unwritable_output_folder(monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(cli, "_simulate_contract_edits", lambda **_: fake_demo([]))
    assert cli.main(["demo", "--out", str(blocker / "sub")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dexviz demo: error: cannot create output folder")
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- demo, end to end


@pytest.mark.slow
def test_demo_runs_the_contract_edit_flow(tmp_path):
    out = tmp_path / "demo"
    completed = run_module("demo", "--out", str(out), "--seed", "3")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "ContractEditFlow with 8 reviewers, seed 3: COMPLETED"
    records = [RECORD_LINE.match(line) for line in lines if line.startswith("  reviewer-")]
    assert all(records), lines
    outcomes = {match.group(1): match.group(2) for match in records if match}
    assert outcomes == {
        f"reviewer-{n}": {2: "failed", 4: "failed", 6: "withdrawn"}.get(n, "saved")
        for n in range(1, 9)
    }
    assert min(float(match.group(3)) for match in records if match) == 0
    assert "critical section held: no two of the 5 saved edits overlap" in completed.stdout
    history = (out / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert history, "history.jsonl is empty"
    assert all(isinstance(json.loads(line), dict) for line in history)


@pytest.mark.slow
def test_demo_is_deterministic_for_a_seed(tmp_path):
    first = run_module("demo", "--out", str(tmp_path / "a"), "--seed", "5", "--reviewers", "4")
    second = run_module("demo", "--out", str(tmp_path / "b"), "--seed", "5", "--reviewers", "4")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.replace(str(tmp_path / "a"), "OUT") == second.stdout.replace(
        str(tmp_path / "b"), "OUT"
    )
    assert (tmp_path / "a" / "history.jsonl").read_bytes() == (
        tmp_path / "b" / "history.jsonl"
    ).read_bytes()


# ---------------------------------------------------------------------------- graph


def _graph(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["graph", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_line_error(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dexviz graph: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


def test_graph_missing_file_exits_1(capsys, tmp_path):
    missing = tmp_path / "nowhere.py"
    code, out, err = _graph(capsys, str(missing), "-o", "-")
    assert code == 1
    assert out == ""
    _assert_one_line_error(err, "no such file", str(missing))


def test_graph_directory_is_not_a_file(capsys, tmp_path):
    code, _, err = _graph(capsys, str(tmp_path), "-o", "-")
    assert code == 1
    _assert_one_line_error(err, "not a file")


def test_graph_unknown_format_exits_2_and_lists_the_formats(capsys, tmp_path):
    code, _, err = _graph(capsys, str(CONTRACT_EDIT), "-o", str(tmp_path / "graph.gif"))
    assert code == 2
    _assert_one_line_error(err, "unknown output format '.gif'", "'.svg'", "'.md'")
    assert not (tmp_path / "graph.gif").exists()


def test_graph_prints_dot_to_stdout(capsys):
    code, out, err = _graph(capsys, str(CONTRACT_EDIT), "-o", "-")
    assert (code, err) == (0, "")
    assert out.lstrip().startswith("digraph")
    for name in ("EnterContractEdit", "EditContract", "SaveContractEdit", "contractEditToken"):
        assert name in out


def test_graph_selects_the_flow_by_name(capsys):
    code, out, err = _graph(capsys, f"{CONTRACT_EDIT}:ContractEditFlow")
    assert (code, err) == (0, "")
    assert "FinishContractEdits" in out


def test_graph_unknown_flow_name_exits_2(capsys):
    code, out, err = _graph(capsys, f"{CONTRACT_EDIT}:NoSuchFlow", "-o", "-")
    assert code == 2
    assert out == ""
    _assert_one_line_error(err, "NoSuchFlow")


def test_graph_file_without_a_flow_exits_1(capsys, tmp_path):
    source = tmp_path / "plain.py"
    source.write_text("def helper():\n    return 1\n")
    code, _, err = _graph(capsys, str(source), "-o", "-")
    assert code == 1
    _assert_one_line_error(err, "plain.py")


def test_graph_syntax_error_exits_1(capsys, tmp_path):
    source = tmp_path / "broken.py"
    source.write_text("class Broken(:\n")
    code, _, err = _graph(capsys, str(source), "-o", "-")
    assert code == 1
    _assert_one_line_error(err)


@pytest.mark.parametrize("suffix", [".dot", ".json", ".md"])
def test_graph_writes_text_formats(capsys, tmp_path, suffix):
    target = tmp_path / f"contract{suffix}"
    code, out, err = _graph(capsys, str(CONTRACT_EDIT), "-o", str(target))
    assert (code, err) == (0, "")
    assert out.strip() == f"wrote {target}"
    text = target.read_text(encoding="utf-8")
    assert "EditContract" in text
    if suffix == ".json":
        assert isinstance(json.loads(text), dict)


def test_graph_left_to_right_changes_the_dot(capsys):
    _, top_down, _ = _graph(capsys, str(CONTRACT_EDIT))
    code, left_right, err = _graph(capsys, str(CONTRACT_EDIT), "--lr")
    assert (code, err) == (0, "")
    assert "rankdir" in left_right and "LR" in left_right
    assert top_down != left_right


def test_graph_hide_resources_drops_channel_nodes(capsys):
    _, shown, _ = _graph(capsys, str(CONTRACT_EDIT))
    code, hidden, err = _graph(capsys, str(CONTRACT_EDIT), "--hide-resources")
    assert (code, err) == (0, "")
    assert "contractEditToken" in shown
    assert "EditContract" in hidden
    assert len(hidden) < len(shown)


@pytest.mark.requires_dot
def test_graph_renders_svg_through_the_script(tmp_path):
    target = tmp_path / "contract.svg"
    completed = run_module("graph", str(CONTRACT_EDIT), "-o", str(target))
    assert completed.returncode == 0, completed.stderr
    assert target.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))


# ---------------------------------------------------------------------------- run, history

FLOW_FILE = '''
from dexviz import Context, Flow, Step, StepDecision, StepList, go_to, graceful_complete


class Count(Step[int]):
    """Counts up to three."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Count, n + 1) if n < 3 else graceful_complete(n)


class Counter(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Count())
'''


@pytest.mark.slow
def test_demo_writes_every_view(tmp_path):
    completed = run_module("demo", "--out", str(tmp_path), "--seed", "1")
    assert completed.returncode == 0, completed.stderr
    for name in ("history.jsonl", "timeline.svg", "executions.csv", "exclusive-sections.txt"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert (tmp_path / "graph.svg").exists() or (tmp_path / "graph.dot").exists()
    assert "8 holdings, OK" in completed.stdout


def test_run_simulates_a_flow_file_and_writes_its_views(tmp_path, capsys):
    source = tmp_path / "counter.py"
    source.write_text(FLOW_FILE)
    out = tmp_path / "out"
    assert cli.main(["run", f"{source}:Counter", "--input", "0", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "Counter run" in stdout and "COMPLETED" in stdout
    assert (out / "history.jsonl").exists() and (out / "executions.csv").exists()


def test_run_rejects_input_that_does_not_fit(tmp_path, capsys):
    source = tmp_path / "counter.py"
    source.write_text(FLOW_FILE)
    assert cli.main(["run", str(source), "--input", '"three"', "--out", str(tmp_path)]) == 2
    assert "does not fit the start Step's input" in capsys.readouterr().err


def test_run_names_the_missing_flow_class(tmp_path, capsys):
    source = tmp_path / "counter.py"
    source.write_text(FLOW_FILE)
    assert cli.main(["run", f"{source}:Nope", "--out", str(tmp_path)]) == 2
    assert "has no Flow class 'Nope'" in capsys.readouterr().err


def test_history_summarises_a_saved_run(tmp_path, capsys):
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    path = dexviz.simulate(ContractEditFlow(), sample_edits(3)).history.save(tmp_path / "h.jsonl")
    assert cli.main(["history", str(path), "--channel", "contractEditToken"]) == 0
    assert "3 holdings, OK" in capsys.readouterr().out


def test_history_reports_a_malformed_file_with_its_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "dexviz-history", "version": 1, "flow_id": "f"}\nnot json\n')
    assert cli.main(["history", str(path)]) == 1
    assert "line 2: invalid JSON" in capsys.readouterr().err
