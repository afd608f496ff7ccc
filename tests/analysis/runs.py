"""Test support: real contract-edit runs from the engine, cached per seed."""

from __future__ import annotations

from functools import cache

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
