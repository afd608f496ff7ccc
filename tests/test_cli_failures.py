"""The CLI says why a run failed, exits 1 on it, and rejects a --channel the Flow lacks."""

from __future__ import annotations

import pytest

import dexviz
from dexviz import cli

FAILING_FLOW = '''
from datetime import timedelta
from dexviz import Context, Flow, RetryPolicy, Step, StepList, StepOptions, go_to


class Start(Step[int]):
    def execute(self, context: Context, n: int):
        return go_to(Boom, n)


class Boom(Step[int]):
    def execute(self, context: Context, n: int):
        return None + n

    def get_step_options(self):
        return StepOptions(execute_retry=RetryPolicy(
            initial_interval=timedelta(seconds=1), maximum_attempts=3))


class Failing(Flow[int]):
    def get_steps(self):
        return StepList.start_step(Start()).other_steps(Boom())
'''
WHY = ("why: Boom-1 execute failed after 3 attempts: TypeError: unsupported operand type(s) "
       "for +: 'NoneType' and 'int'")


@pytest.fixture
def failing(tmp_path):
    path = tmp_path / "failing.py"
    path.write_text(FAILING_FLOW)
    return path


def test_run_names_the_failing_execution_and_exits_1(failing, tmp_path, capsys):
    assert cli.main(["run", str(failing), "--input", "1", "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and WHY in out


def test_history_of_a_failed_run_says_why_and_exits_1(failing, tmp_path, capsys):
    assert cli.main(["run", str(failing), "--input", "1", "--out", str(tmp_path / "o")]) == 1
    capsys.readouterr()
    assert cli.main(["history", str(tmp_path / "o" / "history.jsonl")]) == 1
    assert WHY in capsys.readouterr().out


def test_channel_on_a_flow_without_channels_is_a_usage_error(failing, tmp_path, capsys):
    code = cli.main(["run", str(failing), "--input", "1", "--out", str(tmp_path / "o"),
                     "--channel", "nosuch"])
    assert code == 2
    assert "has no Channel 'nosuch' (its Channels: none)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_channel_typo_suggests_the_declared_channel(tmp_path, capsys):
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    path = dexviz.simulate(ContractEditFlow(), sample_edits(2)).history.save(tmp_path / "h.jsonl")
    assert cli.main(["history", str(path), "--channel", "contractEditTokn"]) == 2
    assert "did you mean 'contractEditToken'" in capsys.readouterr().err


def test_simulation_run_and_result_reprs_say_why(failing):
    import importlib.util

    spec = importlib.util.spec_from_file_location("failing_flow_repr", failing)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = dexviz.simulate(module.Failing(), 1)
    for text in (repr(run), repr(run.result), run._repr_html_()):
        assert "Boom-1" in text and "TypeError" in text and "3 attempt" in text
        assert "unsupported operand" in text
