"""compact / expand: a stored payload reads back equal to the one the engine recorded."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dexviz.engine.sqlite.sqlite_compact import NESTED, USUAL, compact, expand

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.just(""),
    st.text(max_size=3),
    st.just([]),
    st.just({}),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@st.composite
def _payloads(draw: Any) -> tuple[Any, dict[str, Any], int]:
    kind = draw(st.sampled_from(sorted(USUAL, key=str)))
    time_ns = draw(st.sampled_from([0, 1, 10**18]))
    keys = list(USUAL[kind]) + ["other", "decision"]
    payload: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(keys), unique=True)):
        if key == "decision":
            inner = list(NESTED["decision"]) + ["kind"]
            chosen = draw(st.lists(st.sampled_from(inner), unique=True))
            payload[key] = {k: draw(_values) for k in chosen}
        elif key == "started_ns":
            payload[key] = draw(st.sampled_from([time_ns, time_ns - 5, True]))
        else:
            payload[key] = draw(_values)
    for key, value in USUAL[kind].items():  # the engine always writes the kind's members
        payload.setdefault(key, time_ns if key == "started_ns" else value)
    if "decision" in payload:
        for key, value in NESTED["decision"].items():
            payload["decision"].setdefault(key, value)
    return kind, payload, time_ns


@given(_payloads())
def test_a_compacted_payload_expands_to_the_original(case: tuple[Any, dict[str, Any], int]) -> None:
    kind, payload, time_ns = case
    stored = compact(kind, payload, time_ns)
    copied = {k: (dict(v) if isinstance(v, dict) else v) for k, v in stored.items()}
    assert expand(kind, copied, time_ns) == payload


def test_usual_members_are_left_out() -> None:
    from dexviz.history.kinds import EventKind

    payload = {"started_ns": 7, "attempts": 1, "writes": [], "decision": {"reason": "", "x": 1}}
    assert compact(EventKind.STEP_EXECUTE_COMPLETED, payload, 7) == {"decision": {"x": 1}}
    kept = compact(EventKind.STEP_EXECUTE_COMPLETED, {"attempts": True}, 7)
    assert kept == {"attempts": True}  # same value, other type: kept


# -- the fast path's payloads, compacted from their own values -------------------------------


def _executions(count: int, inputs: list[Any]) -> tuple[Any, ...]:
    from dexviz.engine.commit.decide import DEFAULT_OPTIONS
    from dexviz.engine.core.state import Execution
    from tests.engine.flows_a import AdHocFlow
    from tests.engine.test_fast_path import Hop

    flow = AdHocFlow("Compact", Hop())
    from dexviz.sdk.registry import Registry

    step = Registry([flow]).definition(flow).start
    assert step is not None
    return tuple(
        Execution(f"Hop-{i + 1}", step, inputs[i % len(inputs)], "Hop-0", DEFAULT_OPTIONS)
        for i in range(count)
    )


@given(
    started=st.sampled_from(["at", "before", "bool"]),
    attempts=st.sampled_from([1, 2, True]),
    kind=st.sampled_from(["NEXT", "DEAD_END", "GRACEFUL_COMPLETE"]),
    output=st.one_of(st.none(), st.integers(min_value=-2, max_value=2), st.text(max_size=2)),
    has_output=st.booleans(),
    reason=st.sampled_from(["", "why"]),
    published=st.lists(st.text(min_size=1, max_size=3), max_size=2),
    new=st.integers(min_value=0, max_value=3),
    time_ns=st.sampled_from([0, 10**18]),
)
def test_a_fast_commit_payload_compacts_as_its_built_dict_does(
    started: str, attempts: int, kind: str, output: Any, has_output: bool, reason: str,
    published: list[str], new: int, time_ns: int,
) -> None:
    import json

    from dexviz.engine.core.completed import PlainCompleted
    from dexviz.engine.sqlite.sqlite_compact import compact_payload
    from dexviz.history.kinds import EventKind
    from dexviz.sdk.decision import NO_OUTPUT, DecisionKind, StepDecision

    started_ns: Any = {"at": time_ns, "before": time_ns - 7, "bool": True}[started]
    decision = StepDecision(
        DecisionKind[kind], output=output if has_output else NO_OUTPUT, reason=reason
    )
    executions = _executions(new, [0, "x", None, True])
    payload = PlainCompleted(
        started_ns, attempts, decision, tuple(published),
        executions[0] if len(executions) == 1 else executions,
    )  # fmt: skip
    kinds = EventKind.STEP_EXECUTE_COMPLETED
    direct = compact_payload(kinds, payload, time_ns)
    assert payload._value is None  # compacted without building the dict
    built = compact(kinds, payload.value, time_ns)
    assert json.dumps(direct) == json.dumps(built)  # same members, same order


@given(
    started=st.sampled_from(["at", "before"]),
    attempts=st.sampled_from([1, 3]),
    time_ns=st.sampled_from([0, 10**18]),
)
def test_a_plain_wait_for_payload_compacts_as_its_built_dict_does(
    started: str, attempts: int, time_ns: int
) -> None:
    import json
    from datetime import timedelta

    from dexviz import Channel, Timer, Wait
    from dexviz.engine.core.wait_payloads import PlainWaitForCompleted
    from dexviz.engine.sqlite.sqlite_compact import compact_payload
    from dexviz.history.kinds import EventKind

    token = Channel("compact_token", str)
    for wait in (
        Wait.until(token.for_one()),
        Wait.any_of(token.at_least(2), Timer.by_duration(timedelta(seconds=3))),
    ):
        started_ns = time_ns if started == "at" else time_ns - 7
        payload = PlainWaitForCompleted(started_ns, attempts, wait)
        kind = EventKind.STEP_WAIT_FOR_COMPLETED
        direct = compact_payload(kind, payload, time_ns)
        assert payload._value is None
        assert json.dumps(direct) == json.dumps(compact(kind, payload.value, time_ns))
