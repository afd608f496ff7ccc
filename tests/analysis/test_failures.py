"""Why a run failed, read from its history only."""

from __future__ import annotations

from dataclasses import replace

from dexviz.analysis.executions import build_executions
from dexviz.analysis.failures import RunFailure, run_failure, step_failures
from tests.analysis.runs import contract_edit_run


def test_a_completed_run_has_no_failure():
    run = build_executions(contract_edit_run(0, 2))
    assert run_failure(run) is None
    # the sample's failing edits are routed to a recovery Step: failures, not the run's
    assert all(f.execution_id in run and run[f.execution_id].recovery for f in step_failures(run))


def test_describe_names_execution_method_attempts_and_error():
    failure = RunFailure("Boom-1", "Boom", "execute", "builtins.TypeError", "bad operand", 3)
    assert failure.describe() == "Boom-1 execute failed after 3 attempts: TypeError: bad operand"
    assert "after 1 attempt:" in replace(failure, attempts=1).describe()
    flow = RunFailure(None, None, None, "TIMEOUT", None, 0)
    assert flow.describe() == "the Flow failed: TIMEOUT"
