"""replay_check: each change class gets its verdict; stores of many runs get one per run."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.analysis.run_diff import Aspect
from dexviz.compare import ReplayError, diff, replay_check, replay_check_store
from dexviz.engine import FaultPlan, SQLiteStore, StoreError
from tests.compare.variants import (
    CHANGES,
    EXPECTED_VERDICTS,
    MODULE,
    load_variant,
    record,
    shift_execution_numbers,
)
from tests.engine.damaged_stores import damage, open_run_store


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("variants")
    original = load_variant(folder, ())
    return folder, [record(original, 8, seed).history for seed in range(2)]


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_change_class_gets_its_expected_verdict(recorded, change):
    folder, histories = recorded
    edited = load_variant(folder, CHANGES[change])
    for history in histories:
        check = replay_check(history, edited.ContractEditFlow())
        assert check.compatible is EXPECTED_VERDICTS[change], check.describe()
        assert bool(check) is check.compatible
        assert (check.first_divergence is None) is check.compatible


def test_a_renamed_step_diverges_at_the_parent_that_now_goes_elsewhere(recorded):
    folder, histories = recorded
    edited = load_variant(folder, CHANGES["renamed Step"])
    divergence = replay_check(histories[0], edited.ContractEditFlow()).first_divergence
    assert divergence is not None
    assert (divergence.aspect, divergence.step_type, divergence.method) == (
        Aspect.DECISION, "EditContract", "execute")
    assert divergence.recorded["next"][0]["step_type"] == "SaveContractEdit"
    assert divergence.replayed["next"][0]["step_type"] == "SaveEdit"
    assert histories[0][divergence.seq - 1].execution_id == divergence.execution_id
    assert divergence.location is not None
    assert divergence.location.qualname == "EditContract.execute"


def test_a_reordered_publication_names_the_step_method_that_publishes(recorded):
    folder, histories = recorded
    edited = load_variant(folder, CHANGES["reordered publication"])
    check = replay_check(histories[0], edited.ContractEditFlow())
    divergence = check.first_divergence
    assert divergence is not None and divergence.aspect is Aspect.PUBLISHED
    assert divergence.step_type == "SaveContractEdit"
    assert [c for c, _ in divergence.recorded] == ["contractEditFinished", "contractEditToken"]
    assert [c for c, _ in divergence.replayed] == ["contractEditToken", "contractEditFinished"]
    location = divergence.location
    assert location is not None and location.qualname == "SaveContractEdit.execute"
    source = open(location.file, encoding="utf-8").read().splitlines()
    assert "async def execute" in source[location.line - 1] or "def execute" in "".join(
        source[location.line - 1: location.line + 1])
    assert f"#{divergence.seq} {divergence.execution_id} execute" in check.describe()


def test_injected_faults_are_replayed_as_recorded(tmp_path):
    original = load_variant(tmp_path, ())
    plan = FaultPlan.of(FaultPlan.fail("SaveContractEdit", "execute", 1))
    history = record(original, 3, seed=1, faults=plan).history
    assert any(e.kind == "AttemptFailed" and e.step_type == "SaveContractEdit" for e in history)
    assert replay_check(history, original.ContractEditFlow()).compatible


def test_a_flow_type_the_code_no_longer_has_diverges_at_the_start(recorded):
    _, histories = recorded
    check = replay_check(histories[0], _Other())
    assert not check.compatible
    assert check.first_divergence is not None and check.first_divergence.seq == 1
    assert check.first_divergence.aspect is Aspect.FLOW


class _Done(dexviz.Step[int]):
    def execute(self, context: dexviz.Context, value: int) -> dexviz.StepDecision:
        return dexviz.dead_end()


class _Other(dexviz.Flow[int]):
    def get_steps(self) -> dexviz.StepList[int]:
        return dexviz.StepList.start_step(_Done())


def test_histories_that_cannot_be_replayed_are_refused_with_the_reason(recorded):
    folder, histories = recorded
    flow = load_variant(folder, ()).ContractEditFlow()
    with pytest.raises(ReplayError, match="does not start with the run's start"):
        replay_check(histories[0][5:], flow)
    renumbered = shift_execution_numbers(histories[0])
    assert replay_check(renumbered, flow).compatible


def test_a_store_of_many_runs_gets_one_verdict_per_run(recorded, tmp_path):
    folder, _ = recorded
    original = load_variant(folder, ())
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    for number in range(1, 7):  # one simulation per run: its seed alone drives its schedule
        run = record(original, number, seed=number, flow_id=f"edit-{number}")
        store.commit(f"edit-{number}", run.history.events)
    store.close()
    stored = [dexviz.History.load(h.save(tmp_path / f"{fid}.jsonl"))
              for fid, h in _histories(path)]
    assert len(stored) == 6
    assert replay_check_store(path, original.ContractEditFlow()).compatible
    edited = load_variant(folder, CHANGES["changed decision"])
    seen: list[int] = []
    checked = replay_check_store(path, edited.ContractEditFlow(),
                                 progress=lambda done, total, _: seen.append(done))
    assert seen == [1, 2, 3, 4, 5, 6]
    verdicts = {v.name: v.compatible for v in checked.verdicts}
    # Only runs with a third reviewer reach the changed decision.
    assert verdicts == {f"edit-{n}": n < 3 for n in range(1, 7)}
    assert not checked and len(checked.diverging) == 4
    by_folder = replay_check_store(tmp_path, edited.ContractEditFlow())
    assert [v.compatible for v in by_folder.verdicts] == [n < 3 for n in range(1, 7)]


def test_a_damaged_store_raises_the_store_error_naming_its_row(recorded, tmp_path):
    folder, _ = recorded
    path = open_run_store(tmp_path / "runs.db")
    message = damage(path, "deleted row")
    with pytest.raises(StoreError, match=message):
        replay_check_store(path, load_variant(folder, ()).ContractEditFlow())


def _histories(path):
    store = SQLiteStore(path, readonly=True)
    try:
        return [(flow_id, store.history(flow_id)) for flow_id in store.flow_ids()]
    finally:
        store.close()


def test_a_store_run_that_is_not_a_simulation_gets_a_verdict_not_a_crash(tmp_path, recorded):
    folder, histories = recorded
    (tmp_path / "cut.jsonl").write_text(histories[0][3:].to_jsonl(), encoding="utf-8")
    histories[0].save(tmp_path / "whole.jsonl")
    checked = replay_check_store(tmp_path, load_variant(folder, ()).ContractEditFlow())
    described = [v.describe() for v in checked.verdicts]
    assert described[0].startswith("cut.jsonl: cannot replay:")
    assert described[1] == "whole.jsonl: flow-1: compatible"
    with pytest.raises(ValueError, match="neither a directory"):
        replay_check_store(tmp_path / "whole.jsonl", load_variant(folder, ()).ContractEditFlow())


def test_diff_takes_runs_files_and_stores(recorded, tmp_path):
    _, histories = recorded
    path = histories[0].save(tmp_path / "a.jsonl")
    assert not diff(path, histories[0])
    assert diff(str(path), histories[1])
    with pytest.raises(TypeError, match="cannot compare a int"):
        diff(3, histories[0])
    assert MODULE  # the variants' module name is fixed for every load
