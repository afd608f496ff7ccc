"""Every subcommand fails with one line on stderr: exit 1, or 2 for a usage error; --debug raises.

OSErrors (missing files, directories, paths too long, a file where a folder should be), dexviz
errors (a damaged history, a source with a syntax error, a Flow the Registry rejects) and any
other exception become ``dexviz CMD: error: <one line>``. ``--out`` never writes through a
symbolic link.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dexviz import cli
from dexviz.cli.common import RUN_OUTPUT_NAMES
from tests.analysis.definition.helpers import CONTRACT_EDIT

LONG = "x" * 5000
FLOW_FILE = '''
from dexviz import Context, Flow, Step, StepDecision, StepList, graceful_complete


class Count(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n + 1)


class Counter(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Count())
'''


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


def _one_line(err: str, command: str, *fragments: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dexviz {command}: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert len(lines[0]) < 800
    return lines[0]


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    path = tmp_path / "counter.py"
    path.write_text(FLOW_FILE)
    return path


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    history = dexviz.simulate(ContractEditFlow(), sample_edits(2)).history
    return history.save(tmp_path / "saved.jsonl")


def _bad_history(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"flow_id":"f","format":"dexviz-history","version":1}\n{"seq": 2}\n')
    return path


def _file_as_folder(tmp_path: Path) -> Path:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    return blocker / "sub"


# Missing or unreadable inputs: OSError territory, exit 1 naming the path.
INPUT_CASES = [
    ("graph", lambda tmp: [str(tmp / "none.py")], "no such file"),
    ("graph", lambda tmp: [str(tmp)], "not a file"),
    ("graph", lambda tmp: [LONG + ".py"], "cannot read"),
    ("graph", lambda tmp: ["/dev/zero"], "not a file"),
    ("run", lambda tmp: [str(tmp / "none.py"), "--out", str(tmp / "o")], "no such file"),
    ("run", lambda tmp: [str(tmp), "--out", str(tmp / "o")], "not a file"),
    ("run", lambda tmp: [LONG + ".py", "--out", str(tmp / "o")], "cannot read"),
    ("history", lambda tmp: [str(tmp / "none.jsonl")], "no such file"),
    ("history", lambda tmp: [str(tmp)], "not a file"),
    ("history", lambda tmp: [LONG], "cannot read"),
    ("history", lambda tmp: ["/dev/null"], "not a file"),
    ("report", lambda tmp: [str(tmp / "none.jsonl")], "no such file"),
    ("report", lambda tmp: [LONG], "cannot read"),
]


@pytest.mark.parametrize(("command", "args", "fragment"), INPUT_CASES)
def test_an_unreadable_input_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, args, fragment: str
) -> None:
    code, err = _main(capsys, command, *args(tmp_path))
    assert code == 1
    line = _one_line(err, command, fragment)
    assert "..." in line or str(tmp_path) in line or "/dev/" in line


def test_bad_inputs_to_dexviz_are_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _bad_history(tmp_path)
    for command in ("history", "report"):
        code, err = _main(capsys, command, str(bad))
        assert code == 1
        _one_line(err, command, f"{bad}: line 2: ")
    syntax = tmp_path / "broken.py"
    syntax.write_text("class Broken(:\n")
    code, err = _main(capsys, "graph", str(syntax))
    assert code == 1
    _one_line(err, "graph", f"{syntax}:1:", "syntax error")
    code, err = _main(capsys, "run", str(syntax), "--out", str(tmp_path / "o"))
    assert code == 1
    _one_line(err, "run", "importing", "failed")


RUN_FAILURES = {
    "raises at import": "raise RuntimeError('import-time boom')",
    "exits at import": "import sys\nsys.exit(7)",
    "bad Step options": FLOW_FILE.replace(
        "class Counter", "Count.get_step_options = lambda self: 1 / 0\n\nclass Counter"
    ),
    "no Flow class": "x = 1",
}


@pytest.mark.parametrize("source", list(RUN_FAILURES.values()), ids=list(RUN_FAILURES))
def test_run_failures_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    path = tmp_path / "flow.py"
    path.write_text(source)
    code, err = _main(capsys, "run", str(path), "--out", str(tmp_path / "o"))
    assert code in (1, 2)
    line = _one_line(err, "run")
    assert str(path) in line or "Count" in line


def test_a_failing_registration_names_flow_and_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "flow.py"
    path.write_text(RUN_FAILURES["bad Step options"])
    code, err = _main(capsys, "run", str(path), "--out", str(tmp_path / "o"))
    assert code == 1
    _one_line(err, "run", "Flow 'Counter', Step 'Count': get_step_options() raised", "Zero")


USAGE_CASES = [
    ("graph", ["{contract}", "--bogus"], "unrecognized arguments"),
    ("graph", [], "required"),
    ("graph", ["{contract}", "-o", "{tmp}/g.gif"], "unknown output format"),
    ("graph", ["{contract}:NoSuchFlow"], "NoSuchFlow"),
    ("run", ["{flow}", "--seed", "x", "--out", "{tmp}/o"], "invalid int value"),
    ("run", ["{flow}", "--input", "{{", "--out", "{tmp}/o"], "--input is not JSON"),
    ("run", ["{flow}", "--input", '"three"', "--out", "{tmp}/o"], "does not fit"),
    ("run", ["{flow}:Nope", "--out", "{tmp}/o"], "no Flow class 'Nope'"),
    ("demo", ["--reviewers", "0"], "must be at least 1"),
    ("demo", ["--reviewers", "many"], "not an integer"),
    ("history", ["{saved}", "--channel", "nope"], "--channel"),
    ("report", ["{saved}", "-o", "{tmp}/r.svg"], "name it *.html"),
    ("report", ["{saved}", "--flow", "other"], "not 'other'"),
    ("report", ["{saved}", "--graph", "pie"], "invalid choice"),
]


@pytest.mark.parametrize(("command", "args", "fragment"), USAGE_CASES)
def test_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str, args: list[str], fragment: str,
) -> None:
    values = {"contract": CONTRACT_EDIT, "tmp": tmp_path, "flow": flow_file, "saved": saved}
    argv = [command, *(a.format(**values) for a in args)]
    try:
        code, err = _main(capsys, *argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code, err = int(exit_.code or 0), capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # argparse reports unrecognized arguments from the top-level parser.
    assert lines[0].startswith((f"dexviz {command}: error: ", "dexviz: error: ")), err
    assert fragment in lines[0]


def test_an_unknown_command_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["paint"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dexviz: error: argument COMMAND: invalid choice")


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(tmp_path: Path, where: str) -> None:
    bad = _bad_history(tmp_path)
    argv = ["--debug", "history", str(bad)] if where == "before" else ["history", str(bad),
                                                                          "--debug"]
    from dexviz.cli.common import CliError

    with pytest.raises(CliError, match="line 2"):
        cli.main(argv)


def test_an_unexpected_error_is_one_line_with_its_type(
    monkeypatch: pytest.MonkeyPatch, saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dexviz.viz.run_outputs as run_outputs

    def broken(*_: object, **__: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(run_outputs, "summarize_run", broken)
    code, err = _main(capsys, "history", str(saved))
    assert code == 1
    _one_line(err, "history", "KeyError: 'surprise'", "--debug")


def test_an_interrupted_command_exits_130(
    monkeypatch: pytest.MonkeyPatch, saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dexviz.viz.run_outputs as run_outputs

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_outputs, "summarize_run", interrupted)
    code, err = _main(capsys, "history", str(saved))
    assert code == 130
    _one_line(err, "history", "interrupted")


# -- output folders and files ------------------------------------------------------------------


def _out_args(command: str, flow_file: Path, saved: Path, out: Path) -> list[str]:
    return {
        "demo": ["demo", "--reviewers", "2", "--out", str(out)],
        "run": ["run", str(flow_file), "--out", str(out)],
        "history": ["history", str(saved), "--out", str(out)],
        "graph": ["graph", str(CONTRACT_EDIT), "-o", str(out)],
        "report": ["report", str(saved), "-o", str(out)],
    }[command]


FOLDER_COMMANDS = ["demo", "run", "history"]
FILE_COMMANDS = {"graph": "g.dot", "report": "r.html"}


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_an_output_folder_that_is_a_symlink_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out"
    link.symlink_to(elsewhere)
    code, err = _main(capsys, *_out_args(command, flow_file, saved, link))
    assert code == 1
    _one_line(err, command, "refusing to write through the symbolic link", str(link))
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", ["history.jsonl", "timeline.svg", "executions.csv"])
@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_a_planted_symlink_inside_the_output_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str, name: str,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    code, err = _main(capsys, *_out_args(command, flow_file, saved, out))
    assert code == 1
    _one_line(err, command, "symbolic link", name)
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_an_output_file_that_is_a_symlink_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / FILE_COMMANDS[command]
    link.symlink_to(victim)
    code, err = _main(capsys, *_out_args(command, flow_file, saved, link))
    assert code == 1
    _one_line(err, command, "symbolic link")
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("command", [*FOLDER_COMMANDS, *sorted(FILE_COMMANDS)])
def test_an_output_under_a_file_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str,
) -> None:
    out = _file_as_folder(tmp_path)
    if command in FILE_COMMANDS:
        out = out / FILE_COMMANDS[command]
    code, err = _main(capsys, *_out_args(command, flow_file, saved, out))
    assert code == 1
    _one_line(err, command)


@pytest.mark.parametrize("command", [*FOLDER_COMMANDS, *sorted(FILE_COMMANDS)])
def test_an_output_path_too_long_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow_file: Path, saved: Path,
    command: str,
) -> None:
    out = tmp_path / (LONG + FILE_COMMANDS.get(command, ""))
    code, err = _main(capsys, *_out_args(command, flow_file, saved, out))
    assert code == 1
    _one_line(err, command)


def test_run_outputs_stay_within_the_checked_names(tmp_path: Path, saved: Path) -> None:
    from dexviz import History
    from dexviz.viz.run_outputs import write_run_outputs

    written = write_run_outputs(History.load(saved), tmp_path / "o", channel="contractEditToken")
    assert {p.name for p in written.values()} <= set(RUN_OUTPUT_NAMES)


# -- the analyzer's diagnostics ----------------------------------------------------------------


def test_graph_prints_diagnostics_to_stderr_and_exits_1_on_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.analysis.definition.helpers import HEADER

    path = tmp_path / "twice.py"
    path.write_text(HEADER + (
        "\nclass A(Step[int]):\n"
        "    def execute(self, context: Context, n: int) -> StepDecision:\n"
        "        return dead_end()\n\n"
        "class Unused(Step[int]):\n"
        "    def execute(self, context: Context, n: int) -> StepDecision:\n"
        "        return dead_end()\n\n"
        "class F(Flow[int]):\n"
        "    def get_steps(self) -> StepList[int]:\n"
        "        return StepList.start_step(A()).other_steps(A(), Unused())\n"
    ))
    code = cli.main(["graph", str(path)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.lstrip().startswith("digraph")
    lines = captured.err.strip().splitlines()
    assert any(f"{path}:" in line and "error duplicate_step" in line for line in lines)
    assert any("warning unreachable_step" in line and "Unused" in line for line in lines)
    assert all(line.startswith("dexviz graph: ") for line in lines)


def test_graph_with_warnings_only_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.analysis.definition.helpers import HEADER

    path = tmp_path / "warn.py"
    path.write_text(HEADER + (
        "\nclass A(Step[int]):\n"
        "    def execute(self, context: Context, n: int) -> StepDecision:\n"
        "        return dead_end()\n\n"
        "class Unused(Step[int]):\n"
        "    def execute(self, context: Context, n: int) -> StepDecision:\n"
        "        return dead_end()\n\n"
        "class F(Flow[int]):\n"
        "    def get_steps(self) -> StepList[int]:\n"
        "        return StepList.start_step(A()).other_steps(Unused())\n"
    ))
    code = cli.main(["graph", str(path), "-o", str(tmp_path / "g.json")])
    captured = capsys.readouterr()
    assert code == 0
    assert "warning unreachable_step" in captured.err
    assert json.loads((tmp_path / "g.json").read_text())


def test_explore_does_not_write_its_counterexample_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = Path(cli.__file__).resolve().parent.parent / "examples"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "counterexample.jsonl").symlink_to(victim)
    two = json.dumps([{"reviewer": "a"}, {"reviewer": "b", "should_withdraw": True}])
    code, err = _main(capsys, "explore", str(examples / "contract_edit_broken.py"), "--input",
                      two, "--check", "exclusive:contractEditToken", "--out", str(out))
    assert code == 1
    _one_line(err, "explore", "symbolic link", "counterexample.jsonl")
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("command", ["history", "report"])
def test_a_permission_error_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, saved: Path, capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    code, err = _main(capsys, command, str(saved))
    assert code == 1
    _one_line(err, command, "Permission denied", str(saved))
