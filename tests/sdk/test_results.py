"""Flow results and info (§2.13): statuses, completions, decoding, reprs, JSON-ready forms."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

import pytest

from dexviz.sdk.codec import CodecRegistry, JsonCodec, Value, WireKind, to_json_ready
from dexviz.sdk.errors import FlowErrorType, ValueMappingError
from dexviz.sdk.results import (
    ChannelMessage,
    FlowInfo,
    FlowResult,
    FlowStatus,
    HealthInfo,
    RecoveryErrorInfo,
    SearchFlowEntry,
    SearchFlowsPage,
    StepCompletion,
)

WHEN = datetime(2024, 3, 1, tzinfo=UTC)


class Outcome(Enum):
    SAVED = "saved"
    FAILED = "failed"


@dataclass
class Record:
    reviewer: str
    outcome: Outcome
    at: datetime


class Opaque:
    pass


class Cents:
    def __init__(self, value: int) -> None:
        self.value = value


CENTS = JsonCodec("Cents", lambda data: Cents(int(data)), lambda c: c.value, Cents)


def test_flow_status_and_error_type_keep_dex_members_and_values() -> None:
    assert [(m.name, m.value) for m in FlowStatus] == [
        ("RUNNING", "running"),
        ("COMPLETED", "completed"),
        ("FAILED", "failed"),
        ("CANCELED", "canceled"),
        ("TERMINATED", "terminated"),
        ("SERVER_SIDE_TIMEOUT_INTERNAL_ONLY", "server_side_timeout_internal_only"),
        ("CONTINUED_AS_NEW", "continued_as_new"),
    ]
    assert [m.name for m in FlowErrorType][0] == "STEP_DECISION_FAILED"


def test_step_completion_decodes_a_live_value_as_a_fresh_copy() -> None:
    record = Record("ana", Outcome.SAVED, WHEN)
    completion = StepCompletion("Save", "Save-1", record)
    decoded = completion.decode(Record)
    assert decoded == record and decoded is not record
    assert completion.output is record and completion.value is record
    assert StepCompletion("A", "A-1", 3).decode(int) == 3


def test_step_completion_decodes_json_ready_data_from_a_saved_history() -> None:
    record = Record("ana", Outcome.SAVED, WHEN)
    loaded = StepCompletion("Save", "Save-1", to_json_ready(record))
    decoded = loaded.decode(Record)
    assert decoded == record and decoded.outcome is Outcome.SAVED
    assert StepCompletion("A", "A-1", "failed").decode(Outcome) is Outcome.FAILED
    assert StepCompletion("A", "A-1", [[1, "x"]]).decode(list[tuple[int, str]]) == [(1, "x")]
    assert StepCompletion("A", "A-1", "2024-03-01T00:00:00+00:00").decode(datetime) == WHEN


def test_step_completion_decode_errors_name_the_execution_and_the_types() -> None:
    with pytest.raises(ValueMappingError) as caught:
        StepCompletion("Save", "Save-1", Opaque()).decode(Record)
    assert caught.value.operation == "decode the output of Save-1"
    assert caught.value.detail == "expected Record, got Opaque"
    with pytest.raises(
        ValueMappingError, match="expected field 'outcome' of Record, got a JSON object"
    ):
        StepCompletion("Save", "Save-1", {"reviewer": "ana"}).decode(Record)
    with pytest.raises(ValueMappingError, match="expected int, got str"):
        StepCompletion("Save", "Save-1", "7").decode(int)


def test_step_completion_uses_its_own_or_the_given_codecs() -> None:
    codecs = CodecRegistry({Cents: CENTS})
    assert StepCompletion("A", "A-1", 250, codecs).decode(Cents).value == 250
    assert StepCompletion("A", "A-1", Cents(5)).decode(Cents, codecs).value == 5
    with pytest.raises(TypeError, match="register one"):
        StepCompletion("A", "A-1", 250).decode(Cents)
    assert StepCompletion("A", "A-1", 1, codecs) == StepCompletion("A", "A-1", 1)


def test_flow_result_single_output_and_terminal_states() -> None:
    result = FlowResult.completed([StepCompletion("Finish", "Finish-1", 42)])
    assert result.is_terminal and result.single_output(int) == 42 and result.outputs == (42,)
    for status in (FlowStatus.RUNNING, FlowStatus.CONTINUED_AS_NEW):
        assert not FlowResult(status).is_terminal
    with pytest.raises(
        ValueError, match=re.escape("the Flow result is not terminal (status RUNNING)")
    ):
        FlowResult.running().single_output(int)
    many = FlowResult.completed([StepCompletion("A", "A-1", 1), StepCompletion("B", "B-1", 2)])
    with pytest.raises(
        ValueError, match=re.escape("expected exactly one Step output, found 2 (A-1, B-1)")
    ):
        many.single_output(int)
    with pytest.raises(ValueError, match=re.escape("found 0 (none)")):
        FlowResult.completed().single_output(int)


def test_flow_result_named_constructors() -> None:
    failed = FlowResult.failed(FlowErrorType.STEP_DECISION_FAILED, "deadline")
    assert (failed.status, failed.error_type, failed.error_message) == (
        FlowStatus.FAILED,
        FlowErrorType.STEP_DECISION_FAILED,
        "deadline",
    )
    assert FlowResult.canceled("stop").status is FlowStatus.CANCELED
    assert FlowResult.terminated().status is FlowStatus.TERMINATED
    assert FlowResult.continued_as_new().status is FlowStatus.CONTINUED_AS_NEW
    positional = FlowResult(FlowStatus.COMPLETED, [StepCompletion("A", "A-1", 1)])  # type: ignore[arg-type]
    assert isinstance(positional.completions, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        positional.status = FlowStatus.FAILED  # type: ignore[misc]


def test_reprs_are_readable_and_free_of_memory_addresses() -> None:
    result = FlowResult.completed([StepCompletion("Finish", "Finish-1", Opaque())])
    assert repr(result) == (
        "FlowResult(COMPLETED, completions=[StepCompletion('Finish', 'Finish-1', "
        f"<{__name__}.Opaque>)])"
    )
    failed = FlowResult.failed(FlowErrorType.FLOW_TIMEOUT, "timed out")
    assert repr(failed) == "FlowResult(FAILED, error_type=FLOW_TIMEOUT, error_message='timed out')"
    assert repr(ChannelMessage("m-1", [1])) == "ChannelMessage('m-1', [1])"


def test_flow_result_json_ready_roundtrip() -> None:
    record = Record("ana", Outcome.SAVED, WHEN)
    result = FlowResult.completed([StepCompletion("Save", "Save-1", record)])
    data = result.to_json_ready()
    assert data == {
        "status": "completed",
        "completions": [
            {
                "step_type": "Save",
                "step_execution_id": "Save-1",
                "value": {"reviewer": "ana", "outcome": "saved", "at": "2024-03-01T00:00:00+00:00"},
            }
        ],
        "error_type": None,
        "error_message": None,
    }
    loaded = FlowResult.from_json_ready(data)
    assert loaded.single_output(Record) == record
    failed = FlowResult.failed(FlowErrorType.WORKER_API_FAILED, "boom")
    assert FlowResult.from_json_ready(failed.to_json_ready()) == failed
    with pytest.raises(ValueError, match="not a FlowResult's JSON-ready data"):
        FlowResult.from_json_ready({"status": "exploded", "completions": []})


def test_info_values() -> None:
    info = FlowInfo("f", "r", "Orders", FlowStatus.RUNNING, WHEN)
    assert (info.flow_type, info.status) == ("Orders", FlowStatus.RUNNING)
    assert HealthInfo("OK", "host", 3).duration_seconds == 3
    entry = SearchFlowEntry(
        "f",
        "r",
        "Orders",
        FlowStatus.COMPLETED,
        WHEN,
        None,
        {"Status": Value(WireKind.STRING, "x")},
    )
    page = SearchFlowsPage([entry], "")
    assert page.flows == (entry,) and page.next_page_token == ""
    assert RecoveryErrorInfo("boom", "builtins.ValueError").error_type == "builtins.ValueError"
    message: ChannelMessage[int] = ChannelMessage("m-1", 5)
    assert (message.message_id, message.value) == ("m-1", 5)
