"""A check or fault budget naming something the Flows do not declare fails before exploring."""

from __future__ import annotations

import pytest

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.engine import as_registry
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from dexviz.explore import checks, explore
from dexviz.explore.check_names import KnownNames, UnknownNameError

ONE = [ContractEdit("a")]


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (checks.exclusive("ovn"), "check exclusive(ovn): Flow 'ContractEditFlow' has no Channel"),
        (checks.conserved("contractEditTokn", count=1), "did you mean 'contractEditToken'?"),
    ],
    ids=["exclusive", "conserved"],
)
def test_a_check_on_an_unknown_channel_raises(check: checks.Check, message: str) -> None:
    with pytest.raises(UnknownNameError, match="has no Channel") as raised:
        explore(ContractEditFlow(), ONE, check=check, progress=False)
    assert message in str(raised.value)
    assert "its Channels: contractEditFinished, contractEditToken" in str(raised.value)


def test_a_fault_budget_on_an_unknown_step_raises() -> None:
    with pytest.raises(UnknownNameError, match="no Step type 'Save'"):
        explore(ContractEditFlow(), ONE, check=checks.terminates(),
                faults=FaultBudget.of("Save"), progress=False)


def test_known_names_pass_and_an_error_is_a_value_error() -> None:
    report = explore(ContractEditFlow(), ONE, check=checks.exclusive("contractEditToken"),
                     faults=FaultBudget.of("SaveContractEdit"), progress=False)
    assert report.ok
    assert issubclass(UnknownNameError, ValueError)


def test_known_names_lists_every_flow_declared_name() -> None:
    known = KnownNames.of(as_registry(ContractEditFlow()))
    assert "contractEditToken" in known.channels
    assert "SaveContractEdit" in known.step_types
    known.channel("contractEditToken")
    with pytest.raises(ValueError, match="has no Attribute 'x'"):
        known.attribute("x")
