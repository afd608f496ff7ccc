"""Units are records: they dispatch through their owner's handler table, which the runtime builds.

``dexviz/engine/core/units.py`` names no service; the runtime maps each kind of record to the
collaborator that runs it, once; a collaborator holds the runtime only as its Kernel or as one
of the narrow interfaces of ``dexviz/engine/core/ports.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dexviz
from dexviz.engine.core import units
from dexviz.engine.core.kernel import Kernel
from dexviz.engine.core.units import QueuedStart, RetryAttempt, Unit
from dexviz.engine.runtime import Runtime
from dexviz.examples.contract_edit import ContractEditFlow


def _kinds() -> set[type[Unit]]:
    found: set[type[Unit]] = set()
    todo = list(Unit.__subclasses__())
    while todo:
        kind = todo.pop()
        found.add(kind)
        todo.extend(kind.__subclasses__())
    return found


def _runtime() -> Runtime:
    return dexviz.Engine([ContractEditFlow()], seed=1)._rt


def test_the_runtime_has_one_handler_for_every_kind_of_unit_and_nothing_else():
    rt = _runtime()
    assert set(rt.handlers) == _kinds()
    assert all(callable(handler) for handler in rt.handlers.values())


def test_a_unit_runs_the_handler_of_its_owner_table():
    class Owner:
        def __init__(self) -> None:
            self.seen: list[Any] = []
            self.handlers: dict[type[Unit], Callable[[Any], None]] = {
                RetryAttempt: self.seen.append
            }

    owner = Owner()
    unit = RetryAttempt.of(owner, None, None, "extra")  # type: ignore[arg-type]
    unit()
    assert owner.seen == [unit]
    assert unit.arguments == ("extra",)


def test_a_queued_start_runs_on_its_starter():
    class Starter:
        def __init__(self) -> None:
            self.started: list[QueuedStart] = []

        def start_unit(self, unit: QueuedStart) -> None:
            self.started.append(unit)

    starter = Starter()
    unit = QueuedStart.of(starter, None, None, "execute")  # type: ignore[arg-type]
    unit()
    assert starter.started == [unit]
    assert unit.method == "execute"


def test_the_runtime_queues_first_attempts_on_the_fast_path():
    rt = _runtime()
    assert rt.starter is rt.fast


def test_no_collaborator_holds_the_runtime_except_as_a_port_or_its_kernel():
    rt = _runtime()
    collaborators = (rt.waits, rt.decisions, rt.invoker, rt.fast, rt.timeouts,
                     rt.continue_as_new, rt.starts, rt.subflows, rt.time_travel)  # fmt: skip
    # The runtime is handed down typed as its Kernel (the state) or as a narrow interface of
    # dexviz.engine.core.ports; anything else would be the service locator coming back.
    allowed = {"_rt", "_k", "_host", "_ends", "_committer"}
    for collaborator in collaborators:
        holders = {name for name, value in vars(collaborator).items() if value is rt}
        assert holders <= allowed, (type(collaborator).__name__, holders - allowed)
    assert isinstance(rt, Kernel)
    assert not hasattr(units, "HANDLERS")
