"""``dexviz explore``: exit 0 on a proof, 1 with the shortest trace and its history, 2 on misuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dexviz import History, cli

EXAMPLES = Path(__file__).resolve().parent.parent / "dexviz" / "examples"
TWO = json.dumps([{"reviewer": "a"}, {"reviewer": "b", "should_withdraw": True}])
TOKEN_CHECKS = ["--check", "exclusive:contractEditToken", "--check", "conserved:contractEditToken"]


def test_a_proof_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", f"{EXAMPLES / 'contract_edit.py'}:ContractEditFlow", "--input", TWO,
        *TOKEN_CHECKS, "--check", "terminates", "--fail", "SaveContractEdit",
    ])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("PROVEN exclusive(contractEditToken), conserved(contractEditToken")
    assert "exhaustive=True" in out


def test_a_violation_exits_1_with_the_trace_and_its_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "contract_edit_broken.py"), "--input", TWO, *TOKEN_CHECKS,
        "--out", str(tmp_path),
    ])
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATED exclusive(contractEditToken)" in out
    assert "shortest trace:" in out
    history = History.load(tmp_path / "counterexample.jsonl")
    assert len(history) > 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check", "exclusive"], "expected exclusive:CHANNEL"),
        (["--check", "status:DONE"], "unknown status"),
        (["--check", "conserved:t:x"], "not a whole number"),
        (["--check", "terminates", "--input", "{"], "--input is not JSON"),
        ([], "give at least one --check"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = cli.main(["explore", str(EXAMPLES / "contract_edit.py"), *args])
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "counts"),
    [([], "states pruned"), (["--no-prune"], "(state pruning off)")],
)
def test_the_counts_line_says_schedules_run_and_states_pruned(
    capsys: pytest.CaptureFixture[str], flag: list[str], counts: str
) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "contract_edit.py"), "--input", TWO, *TOKEN_CHECKS,
        "--fail", "SaveContractEdit", *flag,
    ])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[1].endswith(counts) and " schedules run" in lines[1]
    assert "(s)" not in lines[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check", "exclusive:contractEditTokn"],
         "no Channel 'contractEditTokn' (did you mean 'contractEditToken'?)"),
        (["--check", "conserved:ovn"], "no Channel 'ovn'"),
        (["--check", "terminates", "--fail", "SaveContractEdt"],
         "no Step type 'SaveContractEdt' (did you mean 'SaveContractEdit'?)"),
    ],
)
def test_a_check_naming_an_unknown_name_exits_2_before_exploring(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    # Unvalidated, a check on a Channel no Flow has watches nothing and prints PROVEN.
    code = cli.main(["explore", str(EXAMPLES / "contract_edit.py"), "--input", TWO, *args])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert "PROVEN" not in captured.out


def test_a_flow_the_module_imports_can_be_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    app = tmp_path / "app.py"
    app.write_text("from dexviz.examples.contract_edit import ContractEditFlow\n")
    code = cli.main([
        "explore", f"{app}:ContractEditFlow", "--input", TWO, "--check", "terminates",
    ])
    assert code == 0
    assert capsys.readouterr().out.startswith("PROVEN terminates()")


def test_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["explore", "--help"])
    text = capsys.readouterr().out
    options = [line.split()[0] for line in text.splitlines() if line.startswith("  -")]
    assert {"--workers", "--cluster", "--max-schedules", "--strategy"} <= set(options)
    for line in text.splitlines():
        # An option line with nothing after its metavar has no help text.
        if line.startswith("  --") and len(line.split("  ")) < 3:
            follow = text.splitlines()[text.splitlines().index(line) + 1]
            assert follow.startswith(" " * 10), f"undocumented option: {line.strip()}"


def test_the_stateful_strategy_proves_on_two_workers(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "contract_edit.py"), "--input", TWO, *TOKEN_CHECKS,
        "--strategy", "stateful", "--workers", "2",
    ])
    out = capsys.readouterr().out
    assert code == 0
    assert "workers=2" in out and "transitions=" in out


def test_workers_need_the_stateful_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["explore", str(EXAMPLES / "contract_edit.py"), "--input", TWO,
                     "--check", "terminates", "--workers", "2"])
    assert code == 2
    assert "--workers and --cluster need --strategy stateful" in capsys.readouterr().err
