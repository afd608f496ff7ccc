"""``dexviz explore --check eventually_closes``: a proof exits 0, a lasso 1, misuse 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dexviz import History, cli
from dexviz.cli.common import UsageError
from dexviz.cli.explore import parse_check
from dexviz.explore.checks import LivenessCheck

EXAMPLES = Path(__file__).resolve().parents[2] / "dexviz" / "examples"
TWO = json.dumps([{"reviewer": "a"}, {"reviewer": "b", "should_withdraw": True}])


def test_the_seed_flow_is_proven_live_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", f"{EXAMPLES / 'contract_edit.py'}:ContractEditFlow", "--input", TWO,
        "--check", "eventually_closes",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("PROVEN eventually_closes() under fair scheduling")


def test_a_livelock_exits_1_with_the_lasso_and_its_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "livelock_rally.py"), "--input", "0",
        "--check", "eventually_closes", "--out", str(tmp_path),
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "lasso: prefix 4 steps / loop 6 steps" in out
    history = History.load(tmp_path / "counterexample.jsonl")
    assert {"Ping-3", "Pong-2"} <= {e.execution_id for e in history}


def test_a_small_bound_is_inconclusive(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", f"{EXAMPLES / 'contract_edit.py'}:ContractEditFlow", "--input", TWO,
        "--check", "eventually_closes", "--max-schedules", "10",
    ])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out.startswith("INCONCLUSIVE eventually_closes(): bound reached")


def test_eventually_closes_parses_and_takes_no_argument() -> None:
    assert isinstance(parse_check("eventually_closes"), LivenessCheck)
    with pytest.raises(UsageError, match="--check 'eventually_closes:x'"):
        parse_check("eventually_closes:x")


def test_a_misspelt_check_gets_a_did_you_mean() -> None:
    with pytest.raises(UsageError, match="did you mean 'eventually_closes'"):
        parse_check("eventualy_closes")


def test_eventually_closes_with_a_safety_check_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "livelock_rally.py"), "--input", "0",
        "--check", "eventually_closes", "--check", "terminates",
    ])  # fmt: skip
    assert code == 2
    assert "runs its own search: give it without the other checks" in capsys.readouterr().err


def test_eventually_closes_on_workers_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([
        "explore", str(EXAMPLES / "livelock_rally.py"), "--input", "0",
        "--check", "eventually_closes", "--strategy", "stateful", "--workers", "2",
    ])  # fmt: skip
    assert code == 2
    assert "runs in this process: drop --workers" in capsys.readouterr().err
