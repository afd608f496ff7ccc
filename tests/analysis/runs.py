"""Test support: real contract-edit runs from the engine, cached per seed."""

from __future__ import annotations

from functools import cache
from typing import Any

from dexviz.history import History

REVIEWERS = 8
TOKEN = "contractEditToken"


@cache
def contract_edit_run(seed: int = 0, reviewers: int = REVIEWERS) -> History:
    """The history of ContractEditFlow with ``sample_edits(reviewers)`` simulated with ``seed``."""
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    run = dexviz.simulate(ContractEditFlow(), sample_edits(reviewers), seed=seed)
    assert run.result.status.name == "COMPLETED", run.result
    return run.history


def broken_counterexample() -> Any:
    """The replayed counterexample of ``exclusive`` on BrokenContractEditFlow with two edits.

    A ViolationRun stopped at the violating commit: EditContract-1 handed the token back
    before its SaveContractEdit-1 ran, and EnterContractEdit-2 took it.
    """
    from dexviz.examples.contract_edit import ContractEdit
    from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
    from dexviz.explore import checks, explore

    edits = [ContractEdit("r1"), ContractEdit("r2")]
    report = explore(BrokenContractEditFlow(), edits, check=[checks.exclusive(TOKEN)],
                     progress=False)
    assert not report.ok, report
    return report.violations[0].replay()
