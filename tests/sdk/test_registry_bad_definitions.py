"""Bad definitions at registration: a hook that raises, or a lock on an undeclared Attribute.

Each is a FlowDefinitionError naming the Flow and the Step (or the class that broke), raised by
``Registry`` before anything runs; an engine built from the healthy Flows afterwards works.
"""

from __future__ import annotations

from typing import Any

import pytest

from dexviz import (
    Attribute,
    AttributeMap,
    Context,
    Engine,
    FlowDefinitionError,
    FlowStatus,
    PersistenceSchema,
    Registry,
    Step,
    StepDecision,
    StepList,
    StepOptions,
    graceful_complete,
)
from tests.engine.flows_a import AdHocFlow

DECLARED = Attribute("declared", int)
UNDECLARED = Attribute("undeclared", int)
UNDECLARED_MAP = AttributeMap("undeclaredMap", int)
HOOK_ERRORS = [ValueError("bad value"), KeyError("k"), RuntimeError("boom"), ZeroDivisionError()]


class Done(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class OptionsRaise(Done):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def get_step_options(self) -> StepOptions:
        raise self.error


class TypeRaises(OptionsRaise):
    def get_step_type(self) -> str:
        raise self.error


class Locks(Done):
    def __init__(self, options: StepOptions) -> None:
        self.options = options

    def get_step_options(self) -> StepOptions:
        return self.options


class HookFlow(AdHocFlow):
    """A Flow whose ``hook`` method raises ``error``."""

    def __init__(self, hook: str, error: Exception) -> None:
        super().__init__("Hooks", Done(), schema=[DECLARED])
        self.hook = hook
        self.error = error

    def get_flow_type(self) -> str:
        if self.hook == "get_flow_type":
            raise self.error
        return super().get_flow_type()

    def get_steps(self) -> StepList[Any]:
        if self.hook == "get_steps":
            raise self.error
        return super().get_steps()

    def get_persistence_schema(self) -> PersistenceSchema:
        if self.hook == "get_persistence_schema":
            raise self.error
        return super().get_persistence_schema()


@pytest.mark.parametrize("error", HOOK_ERRORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("position", ["start", "other"])
def test_get_step_options_raising_names_flow_and_step(error: Exception, position: str) -> None:
    bad = OptionsRaise(error)
    flow = AdHocFlow("Opts", bad, ()) if position == "start" else AdHocFlow("Opts", Done(), [bad])
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([flow])
    message = str(caught.value)
    assert message.startswith("Flow 'Opts', Step 'OptionsRaise': get_step_options() raised ")
    assert type(error).__name__ in message
    assert caught.value.__cause__ is error


@pytest.mark.parametrize("error", HOOK_ERRORS, ids=lambda e: type(e).__name__)
def test_get_step_type_raising_names_flow_and_step_class(error: Exception) -> None:
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([AdHocFlow("Types", Done(), [TypeRaises(error)])])
    assert str(caught.value).startswith(
        "Flow 'Types', Step class TypeRaises: get_step_type() raised "
    )


@pytest.mark.parametrize("error", HOOK_ERRORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("hook", ["get_flow_type", "get_steps", "get_persistence_schema"])
def test_flow_hook_raising_names_the_flow(hook: str, error: Exception) -> None:
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([HookFlow(hook, error)])
    where = "Flow class HookFlow" if hook == "get_flow_type" else "Flow 'Hooks'"
    assert str(caught.value).startswith(f"{where}: {hook}() raised {type(error).__name__}")


LOCKS = [
    ("wait_for", StepOptions(wait_for_lock_attributes=(UNDECLARED.lock(),)), "undeclared"),
    ("execute", StepOptions(execute_lock_attributes=(UNDECLARED.lock(),)), "undeclared"),
    (
        "execute",
        StepOptions(execute_lock_attributes=(DECLARED.lock(), UNDECLARED.lock())),
        "undeclared",
    ),
    (
        "execute",
        StepOptions(execute_lock_attributes=(UNDECLARED_MAP.lock("a"),)),
        "undeclaredMap",
    ),
    (
        "wait_for",
        StepOptions(wait_for_lock_attributes=(UNDECLARED_MAP.lock("b"),)),
        "undeclaredMap",
    ),
]


@pytest.mark.parametrize(("method", "options", "name"), LOCKS)
def test_lock_on_undeclared_attribute_names_flow_step_and_attribute(
    method: str, options: StepOptions, name: str
) -> None:
    flow = AdHocFlow("Locking", Done(), [Locks(options)], schema=[DECLARED])
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([flow])
    assert str(caught.value) == (
        f"Flow 'Locking', Step 'Locks'.{method} locks the undeclared Attribute {name!r} "
        "(declare it in get_persistence_schema)"
    )


def test_lock_on_declared_attribute_registers_and_runs() -> None:
    options = StepOptions(execute_lock_attributes=(DECLARED.lock(),))
    flow = AdHocFlow("Locking", Locks(options), schema=[DECLARED])
    engine = Engine([flow])
    engine.client().start_flow(flow, "ok-1", 5)
    assert engine.client().wait_for_flow("ok-1").status is FlowStatus.COMPLETED
