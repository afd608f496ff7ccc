"""The ``error_type`` an AttemptFailed records: "module.QualName" (docs/history-format.md)."""

from __future__ import annotations

from dexviz.engine.core.failure_info import error_type_name
from dexviz.engine.core.faults import InjectedFailure


class WorkerDown(InjectedFailure):
    """A user's own error built on the injected one."""


def test_an_injected_failure_keeps_the_name_histories_recorded_before_the_layers():
    assert error_type_name(InjectedFailure("x")) == "dexviz.engine.core.faults.InjectedFailure"


def test_a_subclass_is_named_by_its_own_module_not_by_the_inherited_name():
    assert error_type_name(WorkerDown("x")) == f"{__name__}.WorkerDown"


def test_any_other_error_is_its_module_and_qualified_name():
    assert error_type_name(KeyError("k")) == "builtins.KeyError"
