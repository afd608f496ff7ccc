"""The per-transition fast paths of the stateful search's schedules.

Monitors kept with a snapshot are copied by the built-ins' ``copied()`` (pickled otherwise);
a policy that reads no footprints is given the one that commutes with nothing.
"""

from __future__ import annotations

import pytest

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.engine import as_registry
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow, SaveContractEdit
from dexviz.explore import checks
from dexviz.explore.checks import _Holding, copied_monitors
from dexviz.explore.schedule import run_schedule
from dexviz.explore.schedule_records import Setup
from dexviz.explore.stateful import StateHandle, _ExpandPolicy
from tests.explore.test_stateful import TOKEN_CHECKS

TOKEN = "contractEditToken"


def _monitors() -> list[tuple[str, checks.Monitor]]:
    found = [(c.name, c.monitor()) for c in TOKEN_CHECKS]
    for _, monitor in found[:2]:
        monitor._sections.open.append(_Holding("a", {"a"}, 1))  # type: ignore[attr-defined]
    return found


def test_a_copy_of_the_builtin_monitors_is_independent_and_shows_the_same() -> None:
    monitors = _monitors()
    copies = copied_monitors(monitors)
    assert copies is not None
    assert [checks.monitor_state(m) for _, m in copies] == [
        checks.monitor_state(m) for _, m in monitors
    ]
    for _, copy in copies[:2]:
        holding = copy._sections.open[0]  # type: ignore[attr-defined]
        holding.chain.add("b")
        holding.held += 1
    assert all(m._sections.open[0].chain == {"a"} for _, m in monitors[:2])  # type: ignore[attr-defined]
    assert all(m._sections.open[0].held == 1 for _, m in monitors[:2])  # type: ignore[attr-defined]


def test_a_monitor_without_copied_is_not_copied() -> None:
    plain = checks.as_check(lambda history, state: True)
    monitors = [*_monitors(), (plain.name, plain.monitor())]
    assert copied_monitors(monitors) is None


def _setup(check: tuple[checks.Check, ...], depth: int) -> Setup:
    flow = ContractEditFlow()
    return Setup(as_registry(flow), flow, [ContractEdit(r) for r in "ab"], "flow-1", check,
                 (), FaultBudget.of(SaveContractEdit), depth, False)  # fmt: skip


def _snapshot_kinds(check: tuple[checks.Check, ...]) -> type:
    setup = _setup(check, 3)
    result = run_schedule(setup, _ExpandPolicy((), 2), capture=2)
    assert result.captured is not None
    return type(result.captured.monitors)


def _holds(history: object, state: object) -> bool:
    return True


def test_builtin_monitors_are_kept_as_copies_and_others_pickled() -> None:
    assert _snapshot_kinds(tuple(TOKEN_CHECKS)) is tuple
    # A plain callable's monitor has no copied(): pickled (a module-level function pickles).
    assert _snapshot_kinds((*TOKEN_CHECKS, checks.as_check(_holds))) is bytes
    # One that cannot be pickled leaves the state without a snapshot, as before.
    setup = _setup((*TOKEN_CHECKS, checks.as_check(lambda history, state: True)), 3)
    assert run_schedule(setup, _ExpandPolicy((), 2), capture=2).captured is None


def test_a_snapshot_resumed_twice_gives_its_monitors_the_same_state_each_time() -> None:
    setup = _setup(tuple(TOKEN_CHECKS), 30)
    first = run_schedule(setup, _ExpandPolicy((), 4), capture=4)
    point = first.captured
    assert point is not None and isinstance(point.monitors, tuple)
    kept = [checks.monitor_state(m) for _, m in point.monitors]
    handle = StateHandle((), 5, point, 0)
    ends = [handle.restore(_setup(tuple(TOKEN_CHECKS), 30), (k,)) for k in (0, 0, 1, 0)]
    # The kept copies never change, and equal choices reach equal states.
    assert [checks.monitor_state(m) for _, m in point.monitors] == kept
    assert (
        ends[0].steps[-1].fingerprint
        == ends[1].steps[-1].fingerprint
        == ends[3].steps[-1].fingerprint
    )


def test_the_stateful_policy_measures_no_footprints_and_other_policies_do() -> None:
    from dexviz.explore.footprint import Footprint
    from dexviz.explore.violation import ReplayPolicy

    setup = _setup(tuple(TOKEN_CHECKS), 6)
    stateful = run_schedule(setup, _ExpandPolicy((), 5))
    replayed = run_schedule(setup, ReplayPolicy(tuple(c.index for c in stateful.choices)))
    assert [s.label for s in stateful.steps] == [s.label for s in replayed.steps]
    assert all(s.footprint is Footprint.everything() for s in stateful.steps)
    assert any(s.footprint is not Footprint.everything() for s in replayed.steps)


def test_a_schedule_that_stops_at_its_capture_hands_its_monitors_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dexviz.explore import schedule

    copies: list[int] = []

    def counting(monitors):  # type: ignore[no-untyped-def]
        copies.append(len(monitors))
        return copied_monitors(monitors)

    monkeypatch.setattr(schedule, "copied_monitors", counting)
    result = run_schedule(_setup(tuple(TOKEN_CHECKS), 3), _ExpandPolicy((), 2), capture=2)
    assert result.captured is not None and isinstance(result.captured.monitors, tuple)
    assert copies == []
    # A capture the schedule runs on from keeps copies.
    longer = run_schedule(_setup(tuple(TOKEN_CHECKS), 6), _ExpandPolicy((), 2), capture=2)
    assert longer.captured is not None and isinstance(longer.captured.monitors, tuple)
    assert copies == [3]


def test_the_builtin_monitors_do_not_change_at_the_end() -> None:
    from dexviz.explore.checks import View

    setup = _setup(tuple(TOKEN_CHECKS), 8)
    result = run_schedule(setup, _ExpandPolicy((), 7), capture=7, keep_engine=True)
    assert result.captured is not None and result.engine is not None
    view = View(result.engine, "flow-1")
    for _, monitor in result.captured.monitors:
        before = checks.monitor_state(monitor)
        monitor.at_end(view, True)
        monitor.at_end(view, False)
        assert checks.monitor_state(monitor) == before
