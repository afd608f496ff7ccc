"""Typed access to Dex protojson payloads and their translation into dexviz payload parts.

:class:`Fields` reads one message with protojson's defaults (an absent field is 0, ``""``,
``false``, an empty list or an empty message) and refuses a field of the wrong type with a
:class:`DexValueError` that names the field's path. The functions below turn Dex's wait
conditions, decisions, Attribute writes and failures into the shapes of docs/history-format.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dexviz.history.dex_values import (
    DexValueError,
    duration_ns,
    enum_name,
    int64,
    timestamp_ns,
    value_of,
)

__all__ = [
    "CLOSE_DECISION_TYPE", "CONDITION_STATUS", "FLOW_ERROR_TYPE", "FLOW_STATUS",
    "PENDING_PHASE", "Fields", "decision_kind", "failure", "flow_error_type", "flow_status",
    "kv_of", "wait_of", "writes_of",
]  # fmt: skip

FLOW_STATUS = (
    "FLOW_STATUS_UNSPECIFIED", "FLOW_STATUS_RUNNING", "FLOW_STATUS_COMPLETED",
    "FLOW_STATUS_FAILED", "FLOW_STATUS_SERVER_SIDE_TIMEOUT_INTERNAL_ONLY",
    "FLOW_STATUS_TERMINATED", "FLOW_STATUS_CANCELED", "FLOW_STATUS_CONTINUED_AS_NEW",
)  # fmt: skip
FLOW_ERROR_TYPE = (
    "FLOW_ERROR_TYPE_UNSPECIFIED", "FLOW_ERROR_TYPE_STEP_DECISION_FAILING_FLOW",
    "FLOW_ERROR_TYPE_CLIENT_API_FAILING_FLOW", "FLOW_ERROR_TYPE_WORKER_API_FAIL",
    "FLOW_ERROR_TYPE_INVALID_USER_FLOW_CODE", "FLOW_ERROR_TYPE_FLOW_TIMEOUT",
    "FLOW_ERROR_TYPE_INTERNAL",
)  # fmt: skip
WAITING_CONDITION_TYPE = (
    "WAITING_CONDITION_TYPE_UNSPECIFIED", "WAITING_CONDITION_TYPE_ALL_COMPLETED",
    "WAITING_CONDITION_TYPE_ANY_COMPLETED", "WAITING_CONDITION_TYPE_ANY_COMBINATION_COMPLETED",
)  # fmt: skip
CONDITION_STATUS = (
    "CONDITION_STATUS_UNSPECIFIED", "CONDITION_STATUS_WAITING", "CONDITION_STATUS_COMPLETED",
)  # fmt: skip
CLOSE_DECISION_TYPE = (
    "CLOSE_DECISION_TYPE_UNSPECIFIED", "CLOSE_DECISION_TYPE_FORCE_COMPLETE_ON_CHANNELS_EMPTY",
    "CLOSE_DECISION_TYPE_GRACEFUL_COMPLETE", "CLOSE_DECISION_TYPE_FORCE_COMPLETE",
    "CLOSE_DECISION_TYPE_FORCE_FAIL", "CLOSE_DECISION_TYPE_DEAD_END",
)  # fmt: skip
PENDING_PHASE = (
    "PENDING_STEP_METHOD_PHASE_UNSPECIFIED", "PENDING_STEP_METHOD_PHASE_SCHEDULED",
    "PENDING_STEP_METHOD_PHASE_STARTED",
)  # fmt: skip
FLOW_TIMEOUT_POLICY = (
    "FLOW_TIMEOUT_POLICY_UNSPECIFIED", "FLOW_TIMEOUT_POLICY_FAIL", "FLOW_TIMEOUT_POLICY_CANCEL",
    "FLOW_TIMEOUT_POLICY_HANDLER",
)  # fmt: skip

_WAIT_KIND = {1: "ALL_OF", 2: "ANY_OF", 3: "ANY_COMBINATION_OF"}
_DECISION_KIND = {
    1: "FORCE_COMPLETE_IF_CHANNELS_EMPTY", 2: "GRACEFUL_COMPLETE", 3: "FORCE_COMPLETE",
    4: "FORCE_FAIL", 5: "DEAD_END",
}  # fmt: skip
_FLOW_ERROR = {
    1: "STEP_DECISION_FAILED", 2: "CLIENT_API_FAILED", 3: "WORKER_API_FAILED",
    4: "INVALID_USER_FLOW_CODE", 5: "FLOW_TIMEOUT", 6: "INTERNAL",
}  # fmt: skip


class Fields:
    """One protojson message, read with protojson's defaults and checked types."""

    __slots__ = ("raw", "path", "natural")

    def __init__(self, raw: Any, path: str, natural: bool) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise DexValueError(f"{path} must be an object, not {type(raw).__name__}")
        self.raw: Mapping[str, Any] = raw
        self.path = path
        self.natural = natural

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def has(self, key: str) -> bool:
        """Whether the field is present (protojson leaves defaults out)."""
        return self.raw.get(key) is not None

    def s(self, key: str) -> str:
        """A string field ("" when absent)."""
        value = self.raw.get(key, "")
        if not isinstance(value, str):
            raise DexValueError(f"{self._at(key)} must be a string, not {value!r}")
        return value

    def i(self, key: str) -> int:
        """An integer field, 32-bit (a JSON number) or 64-bit (a decimal string); 0 if absent."""
        value = self.raw.get(key, 0)
        return 0 if value is None else int64(value, self._at(key))

    def b(self, key: str) -> bool:
        """A bool field (False when absent)."""
        value = self.raw.get(key, False)
        if not isinstance(value, bool):
            raise DexValueError(f"{self._at(key)} must be true or false, not {value!r}")
        return value

    def m(self, key: str) -> Fields:
        """A message field (an empty one when absent)."""
        return Fields(self.raw.get(key), self._at(key), self.natural)

    def ms(self, key: str) -> list[Fields]:
        """A repeated message field."""
        return [Fields(item, f"{self._at(key)}[{n}]", self.natural)
                for n, item in enumerate(self._list(key))]

    def ss(self, key: str) -> list[str]:
        """A repeated string field."""
        values = self._list(key)
        for n, value in enumerate(values):
            if not isinstance(value, str):
                raise DexValueError(f"{self._at(key)}[{n}] must be a string, not {value!r}")
        return [str(v) for v in values]

    def _list(self, key: str) -> list[Any]:
        value = self.raw.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            raise DexValueError(f"{self._at(key)} must be a list, not {type(value).__name__}")
        return value

    def value(self, key: str) -> Any:
        """A Dex Value field, decoded (None when absent)."""
        return value_of(self.raw.get(key), self.natural, self._at(key))

    def values(self, key: str) -> list[Any]:
        """A repeated Dex Value field, decoded."""
        return [value_of(v, self.natural, f"{self._at(key)}[{n}]")
                for n, v in enumerate(self._list(key))]

    def time(self, key: str) -> int | None:
        """A Timestamp field in ns (None when absent)."""
        raw = self.raw.get(key)
        return None if raw is None else timestamp_ns(raw, self._at(key))

    def duration(self, key: str) -> int | None:
        """A Duration field in ns (None when absent)."""
        raw = self.raw.get(key)
        return None if raw is None else duration_ns(raw, self._at(key))

    def enum(self, key: str, names: tuple[str, ...]) -> str:
        """An enum field as its name (the first name when absent)."""
        raw = self.raw.get(key, 0)
        return enum_name(0 if raw is None else raw, names, self._at(key))

    def number(self, key: str, names: tuple[str, ...]) -> int:
        """An enum field as its number."""
        name = self.enum(key, names)
        return names.index(name) if name in names else int(name.rsplit("_", 1)[1])


def flow_status(fields: Fields) -> str:
    """A FlowClosed's status as dexviz's FlowStatus names it (``COMPLETED``, ...)."""
    return fields.enum("flowStatus", FLOW_STATUS).removeprefix("FLOW_STATUS_")


def flow_error_type(fields: Fields) -> str | None:
    """A FlowClosed's error type as dexviz's FlowErrorType names it (``WORKER_API_FAILED``)."""
    if not fields.has("errorType"):
        return None
    number = fields.number("errorType", FLOW_ERROR_TYPE)
    return _FLOW_ERROR.get(number) or fields.enum("errorType", FLOW_ERROR_TYPE)


def decision_kind(decision: Fields) -> str:
    """``NEXT`` or the close decision's kind."""
    close = decision.m("closeDecision")
    number = close.number("closeDecisionType", CLOSE_DECISION_TYPE)
    return _DECISION_KIND.get(number, "NEXT")


def wait_of(condition: Fields) -> dict[str, Any]:
    """A WaitingCondition as dexviz's ``wait``: kind, numbered conditions and combinations.

    Conditions are numbered channel conditions first, then timers, then SubFlows.
    """
    conditions: list[dict[str, Any]] = []
    for channel in condition.ms("channelConditions"):
        name = channel.s("channelName")
        least = channel.i("atLeast") if channel.has("atLeast") else None
        most = channel.i("atMost") if channel.has("atMost") else None
        count = least if least == most else f"{least or 0}..{most if most is not None else ''}"
        conditions.append({"index": len(conditions), "kind": "channel", "channel": name,
                           "at_least": least, "at_most": most, "label": f"{name}.for {count}",
                           "condition_id": channel.s("conditionId") or None})
    for number, timer in enumerate(condition.ms("timerConditions")):
        conditions.append({"index": len(conditions), "kind": "timer", "timer_index": number,
                           "duration_s": timer.i("durationSeconds"),
                           "condition_id": timer.s("conditionId") or None})
    for number, child in enumerate(condition.ms("subFlowConditions")):
        conditions.append({"index": len(conditions), "kind": "subflow", "subflow_index": number,
                           "flow_type": child.s("subFlowType"), "input": child.value("stepInput"),
                           "condition_id": child.s("conditionId") or None})
    by_id = {c["condition_id"]: c["index"] for c in conditions if c["condition_id"]}
    combinations = [[by_id[i] for i in combo.ss("conditionIds") if i in by_id]
                    for combo in condition.ms("conditionCombinations")]
    number = condition.number("waitingConditionType", WAITING_CONDITION_TYPE)
    kind = _WAIT_KIND.get(number, "ALL_OF") if conditions else "SKIP_IMMEDIATELY"
    return {"kind": kind, "conditions": conditions, "combinations": combinations}


def writes_of(output: Fields) -> list[dict[str, Any]]:
    """The Attribute writes of a method or RPC (``upsertAttributes``)."""
    found = []
    for write in output.ms("upsertAttributes"):
        value = write.value("value")
        found.append({"attribute": write.s("key"), "value": value,
                      "deleted": value is None and write.b("isHardDeleteOnNull")})
    return found


def failure(fields: Fields) -> dict[str, Any]:
    """A StepMethodFailure as error type, message and stack trace (the worker's, if given).

    The worker's own error type and message are in ``details``; without them (a Temporal
    timeout, say) the backend's error string is all there is.
    """
    details = fields.m("details")
    backend = fields.s("backendError")
    return {
        "error_type": details.s("originalWorkerErrorType") or backend or None,
        "error_message": details.s("originalWorkerErrorDetail") or details.s("detail")
        or backend,
        "stack_trace": details.s("originalWorkerErrorStackTrace"),
        "backend_error": backend,
        "attempt": fields.i("attempt") or None,
    }


def kv_of(entries: list[Fields]) -> dict[str, Any]:
    """Repeated KV as a dict."""
    return {entry.s("key"): entry.value("value") for entry in entries}
