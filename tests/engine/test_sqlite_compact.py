"""compact / expand: a stored payload reads back equal to the one the engine recorded."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dexviz.engine.sqlite_compact import NESTED, USUAL, compact, expand

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
