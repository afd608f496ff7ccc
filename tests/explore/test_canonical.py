"""Canonical states: executions named by lineage, declared symmetry, coroutines in flight.

Canonical numbering must merge states that differ only in how executions were numbered and
never anything else: every state sharing a canonical fingerprint has the same order-free
description (``StateKey``: status, Attributes, queues, the executions with their Step type,
phase, attempt and input, completions, time, pending work).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings

from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import canonical, canonical_memo, checks, explore, schedule
from dexviz.explore.api import _setup
from dexviz.explore.canonical_memo import StateMemo, frozen, same, shows_as
from dexviz.explore.canonical_text import Naming, Pieces
from dexviz.explore.fingerprint import describe_execution
from dexviz.explore.schedule_records import Setup
from dexviz.explore.stateful import walk
from dexviz.explore.symmetry import Symmetry
from tests.explore.flows import Case
from tests.explore.test_soundness import SOUNDNESS_CASES, generated

WALK_BOUND = 3_000
"""States each walk here may expand: every exploration in tests is bounded."""
TOKEN_CHECKS = [
    checks.exclusive(CONTRACT_EDIT_TOKEN.name),
    checks.conserved(CONTRACT_EDIT_TOKEN.name),
    checks.terminates(),
]


def _setup_of(case: Case, symmetric: list[list[object]] | None = None) -> Setup:
    setup = _setup(case.flow, case.input, [], case.actions, case.faults, None, None, "flow-1")
    symmetry = Symmetry.of(symmetric)
    return Setup(*[getattr(setup, f) for f in Setup.__dataclass_fields__][:-1], symmetry)


def _merged_descriptions(setup: Setup) -> dict[str, set[str]]:
    """Each canonical fingerprint met, with the order-free descriptions of its states."""
    found: dict[str, set[str]] = defaultdict(set)
    for expansion in walk(setup, max_states=WALK_BOUND):
        for successor in expansion.successors:
            if successor.fingerprint is not None:
                found[successor.fingerprint].add(successor.state.digest)
    return found


def _assert_never_merges_different_states(case: Case) -> None:
    for fingerprint, states in _merged_descriptions(_setup_of(case)).items():
        assert len(states) == 1, f"{case.name}: {fingerprint} merges {len(states)} states"


@pytest.mark.parametrize("case", SOUNDNESS_CASES, ids=lambda c: c.name)
def test_canonical_numbering_never_merges_states_that_differ(case: Case) -> None:
    _assert_never_merges_different_states(case)


@settings(max_examples=25, deadline=None)
@given(generated)
def test_canonical_numbering_never_merges_states_of_generated_flows(case: Case) -> None:
    _assert_never_merges_different_states(case)


def _contract(count: int, fault: bool = True) -> Case:
    edits = [ContractEdit(f"r{i}", should_withdraw=i == count) for i in range(1, count + 1)]
    return Case(f"contract-{count}", ContractEditFlow(), edits,
                faults=FaultBudget.of(SaveContractEdit, count=1) if fault else None)  # fmt: skip


def test_states_with_a_coroutine_handler_in_flight_are_merged() -> None:
    # EditContract and SaveContractEdit sleep: nearly every state has one suspended, and
    # those states have fingerprints (their frames are described) and meet again.
    setup = _setup_of(_contract(3))
    expansions = list(walk(setup, max_states=WALK_BOUND))
    unkeyed = [e for e in expansions[1:] if e.handle.fingerprint is None]
    merged = sum(len(e.successors) for e in expansions) - len(expansions) + 1
    assert not unkeyed and merged > 0


def _stateful(case: Case, symmetric: list[list[object]] | None = None, check=TOKEN_CHECKS):  # type: ignore[no-untyped-def]
    return explore(
        case.flow, case.input, check=check, faults=case.faults, strategy="stateful",
        progress=False, max_schedules=WALK_BOUND, workers=1, symmetric=symmetric,
    )  # fmt: skip


def test_symmetric_savers_are_one_state_class_and_the_verdict_stands() -> None:
    case = _contract(3)
    plain = _stateful(case)
    savers = case.input[:-1]
    symmetric = _stateful(case, [savers])
    assert plain.proven and symmetric.proven
    assert plain.stateful is not None and symmetric.stateful is not None
    assert symmetric.stateful.expanded < plain.stateful.expanded
    assert "symmetry" in "; ".join(symmetric.stateful.reductions)
    # Every terminal state of the symmetric search is one the full search reaches.
    assert symmetric.terminal_states <= plain.terminal_states


def test_symmetry_does_not_depend_on_the_order_the_group_is_given_in() -> None:
    case = _contract(3)
    savers = case.input[:-1]
    one = _stateful(case, [savers])
    other = _stateful(case, [list(reversed(savers))])
    assert one.stateful is not None and other.stateful is not None
    assert one.stateful.expanded == other.stateful.expanded


def test_a_violation_found_under_symmetry_replays_with_the_concrete_values() -> None:
    edits = [ContractEdit(r) for r in ("ann", "bob", "cy")]
    case = Case("broken-3", BrokenContractEditFlow(), edits)
    report = _stateful(case, [edits])
    assert not report.ok
    run = report.violations[0].replay()
    assert run.violating_seq is not None
    reviewers = {e.reviewer for e in edits}
    named = " ".join(str(e.payload) for e in run.history)
    assert any(r in named for r in reviewers) and "<0." not in named


@pytest.mark.parametrize(
    ("symmetric", "message"),
    [
        ([["a"]], "at least two values"),
        ([["a", "a"]], "distinct"),
        ([[ContractEdit("a"), ContractEdit("b", should_withdraw=True)]], "string fields"),
        ([[1, 2]], "strings or dataclass values"),
        ([["a", "b"], ["b", "c"]], "two groups"),
        ("ab", "list of groups"),
    ],
)
def test_bad_symmetric_groups_are_errors(symmetric: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Symmetry.of(symmetric)  # type: ignore[arg-type]


def test_symmetric_needs_the_stateful_strategy() -> None:
    case = _contract(3, fault=False)
    with pytest.raises(ValueError, match="strategy='stateful'"):
        explore(case.flow, case.input, check=[], strategy="dfs", progress=False,
                max_schedules=10, symmetric=[case.input[:-1]])  # fmt: skip


def test_execution_ids_are_renamed_as_whole_tokens() -> None:
    pieces = Pieces(0, None)
    names = {"Step-1": "Step@ab.0"}
    text = "w Step-1 MyStep-1 Step-12 ('Step-1', 'x')"
    assert pieces.renamed(text, names) == "w Step@ab.0 MyStep-1 Step-12 ('Step@ab.0', 'x')"
    assert pieces.renamed(text, {}) == text  # the same text under another renaming
    piece = pieces.piece(text)  # a piece's kept split, joined again under the names
    assert pieces.rewritten(piece, {}, names) == pieces.renamed(text, names)
    assert pieces.rewritten(pieces.piece("no ids"), {}, names) == "no ids"


@pytest.mark.parametrize("case", SOUNDNESS_CASES[:4] + [_contract(3)], ids=lambda c: c.name)
def test_an_unchanged_live_execution_is_described_as_its_source(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``unchanged`` lets a successor reuse its parent's piece for a live execution.
    reused = 0
    test = canonical_memo.unchanged

    def checked(ex: Any, source: Any) -> bool:
        nonlocal reused
        found = test(ex, source)
        if found:
            reused += 1
            mine, theirs = describe_execution(ex, {}), describe_execution(source, {})
            assert repr(mine) == repr(theirs), f"{case.name}: {ex.execution_id} changed"
        return found

    monkeypatch.setattr(canonical, "unchanged", checked)
    for _ in walk(_setup_of(case), max_states=WALK_BOUND):
        pass
    assert reused > 0


def test_same_tells_values_shown_alike() -> None:
    assert same({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not same([1], [True]) and not same((0.0,), (-0.0,)) and not same({1}, {1})
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the order is shown
    live = {"a": [1, (2, "x")]}
    kept = frozen(live)
    assert shows_as(live, kept)
    live["a"].append(3)
    assert not shows_as(live, kept)
    assert not shows_as([True], frozen([1])) and not shows_as({2}, frozen({2}))


class _Unkept(Pieces):
    """Pieces whose namings are made afresh every time (and keep no piece digests)."""

    def naming(self, key: Any, make: Callable[[], dict[str, str]]) -> Naming:
        return Naming(make())


def _compare_kept_with_fresh(
    case: Case, setup: Setup, monkeypatch: pytest.MonkeyPatch, least: int = 100
) -> None:
    made = canonical.canonical_fingerprint
    compared = reused = 0
    parent = StateMemo.parent

    def found(memo: StateMemo, held: Any) -> Any:
        nonlocal reused
        record = parent(memo, held)
        reused += record is not None
        return record

    def checked(rt: Any, outside: Any, given: Any, symmetry: Any, *rest: Any) -> Any:
        nonlocal compared
        # Made afresh first: the kept description (the last one made) is the search's own.
        fresh = made(rt, outside, given, symmetry, None, _Unkept(given, symmetry))
        keys = made(rt, outside, given, symmetry, *rest)
        assert keys == fresh, f"{case.name}: a kept piece differs from the fresh one"
        compared += keys is not None
        return keys

    monkeypatch.setattr(StateMemo, "parent", found)
    monkeypatch.setattr(schedule, "canonical_fingerprint", checked)
    for _ in walk(setup, max_states=WALK_BOUND):
        pass
    assert compared >= least and reused >= least


@pytest.mark.parametrize("symmetric", [False, True], ids=["numbered", "symmetric"])
def test_kept_pieces_give_the_keys_a_fresh_description_gives(
    symmetric: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Settled executions' pieces, a state's pieces kept for its successors, namings and their
    # piece digests are kept across states: every state's keys must be those of its
    # description made from scratch.
    case = _contract(3)
    _compare_kept_with_fresh(case, _setup_of(case, [case.input[:-1]] if symmetric else None),
                             monkeypatch)  # fmt: skip


@pytest.mark.parametrize("case", SOUNDNESS_CASES[:6], ids=lambda c: c.name)
def test_kept_pieces_of_small_flows_give_the_keys_a_fresh_description_gives(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare_kept_with_fresh(case, _setup_of(case), monkeypatch, least=1)


@pytest.mark.parametrize(
    ("planted", "case"),
    [("unchanged", _contract(3)), ("_same_run", _contract(3)),
     ("_same_queue", next(c for c in SOUNDNESS_CASES if c.name == "contract-1-extra-token"))],
    ids=["executions", "run", "queues"],
)  # fmt: skip
def test_a_planted_bug_in_the_kept_pieces_is_caught(
    planted: str, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each reuse claims "shows the same" where it does not: the comparison must notice.
    monkeypatch.setattr(canonical, planted, lambda *args: True)
    with pytest.raises(AssertionError, match="differs from the fresh one"):
        _compare_kept_with_fresh(case, _setup_of(case), monkeypatch)
