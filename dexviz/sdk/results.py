"""Flow results and info (Dex's ``dex.flow_result`` and ``dex.flow_info``).

A :class:`StepCompletion` holds the raw output value (live engine) or its JSON-ready form
(a history loaded from disk); ``decode`` turns either into the requested type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Generic, TypeVar

from dexviz.sdk._codec_base import has_memory_address, qualified_name
from dexviz.sdk.codec import CodecRegistry, Value, to_json_ready
from dexviz.sdk.errors import FlowErrorType, ValueMappingError

__all__ = [
    "ChannelMessage",
    "FlowErrorType",
    "FlowInfo",
    "FlowResult",
    "FlowStatus",
    "HealthInfo",
    "RecoveryErrorInfo",
    "SearchFlowEntry",
    "SearchFlowsPage",
    "StepCompletion",
]

OutputT = TypeVar("OutputT")
ValueT = TypeVar("ValueT")

_DEFAULT_CODECS = CodecRegistry()
_JSON_NATIVE = (dict, list, str, int, float, bool)


class FlowStatus(Enum):
    """The lifecycle state of a Flow run.

    Attributes:
        RUNNING: Still running.
        COMPLETED: Completed (gracefully or forced).
        FAILED: Failed (force_fail, exhausted handler, FAIL timeout, stop with FAIL).
        CANCELED: Canceled (stop with CANCEL, CANCEL timeout).
        TERMINATED: Terminated by ``stop_flow`` with TERMINATE.
        SERVER_SIDE_TIMEOUT_INTERNAL_ONLY: Dex-internal timeout state.
        CONTINUED_AS_NEW: This run handed over to a new run with the same Flow ID.
    """

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    TERMINATED = "terminated"
    SERVER_SIDE_TIMEOUT_INTERNAL_ONLY = "server_side_timeout_internal_only"
    CONTINUED_AS_NEW = "continued_as_new"


def _safe_repr(value: object) -> str:
    text = repr(value)
    return f"<{qualified_name(type(value))}>" if has_memory_address(text) else text


@dataclass(frozen=True, slots=True)
class StepCompletion:
    """One output-bearing close decision of a Flow (graceful or forced completion).

    Attributes:
        step_type: The Step type that produced the output.
        step_execution_id: Its execution ID, such as ``"Finish-1"``.
        value: The output: the value itself, or its JSON-ready form from a saved history.
        codecs: The registry used by :meth:`decode` when none is given (custom codecs).
    """

    step_type: str
    step_execution_id: str
    value: object
    codecs: CodecRegistry | None = field(default=None, repr=False, compare=False)

    @property
    def output(self) -> object:
        """The raw output value, undecoded."""
        return self.value

    def decode(self, output_type: type[OutputT], codecs: CodecRegistry | None = None) -> OutputT:
        """Return the output as ``output_type``.

        A value that already is of that type comes back as a fresh checked copy; JSON-ready data
        (from a saved history) is decoded through the codec registry.

        Args:
            output_type: The expected type (any type hint the codecs support).
            codecs: The registry to use; defaults to the completion's, else the built-ins.

        Returns:
            The decoded output.

        Raises:
            ValueMappingError: If the output is not, and does not describe, an ``output_type``.
        """
        registry = codecs or self.codecs or _DEFAULT_CODECS
        operation = f"decode the output of {self.step_execution_id}"
        try:
            decoded: OutputT = registry.roundtrip(output_type, self.value, operation=operation)
            return decoded
        except ValueMappingError:
            if not isinstance(self.value, _JSON_NATIVE):
                raise
        # JSON-ready data from a saved history: its error explains the data, so it wins.
        loaded: OutputT = registry.from_json_ready(output_type, self.value, operation=operation)
        return loaded

    def __repr__(self) -> str:
        """Show the step, execution and output (no memory addresses)."""
        return (
            f"StepCompletion({self.step_type!r}, {self.step_execution_id!r}, "
            f"{_safe_repr(self.value)})"
        )


@dataclass(frozen=True, slots=True)
class FlowResult:
    """The observed result of a Flow run: status, outputs, and failure details.

    Attributes:
        status: The run's status.
        completions: The output-bearing close decisions, in the order they happened.
        error_type: Why the run failed, if it did.
        error_message: The failure detail, if any: for a Step's failure, the handler's own
            message, as Dex reports it.
        failure: dexviz's account of a Step failure that failed the run (Flow, execution,
            method, attempts, error type and message); None otherwise. Not part of Dex's API.
    """

    status: FlowStatus
    completions: tuple[StepCompletion, ...] = ()
    error_type: FlowErrorType | None = None
    error_message: str | None = None
    failure: str | None = None

    def __post_init__(self) -> None:
        """Store the completions as a tuple."""
        object.__setattr__(self, "completions", tuple(self.completions))

    @classmethod
    def running(cls) -> FlowResult:
        """Return the snapshot of a run that is still going."""
        return cls(FlowStatus.RUNNING)

    @classmethod
    def completed(cls, completions: Iterable[StepCompletion] = ()) -> FlowResult:
        """Return a completed result with the given outputs."""
        return cls(FlowStatus.COMPLETED, tuple(completions))

    @classmethod
    def failed(
        cls, error_type: FlowErrorType, message: str, completions: Iterable[StepCompletion] = ()
    ) -> FlowResult:
        """Return a failed result."""
        return cls(FlowStatus.FAILED, tuple(completions), error_type, message)

    @classmethod
    def canceled(cls, message: str | None = None) -> FlowResult:
        """Return a canceled result."""
        return cls(FlowStatus.CANCELED, (), None, message)

    @classmethod
    def terminated(cls, message: str | None = None) -> FlowResult:
        """Return a terminated result."""
        return cls(FlowStatus.TERMINATED, (), None, message)

    @classmethod
    def continued_as_new(cls) -> FlowResult:
        """Return the result of a run that continued as a new run."""
        return cls(FlowStatus.CONTINUED_AS_NEW)

    @property
    def is_terminal(self) -> bool:
        """False only while RUNNING or CONTINUED_AS_NEW."""
        return self.status not in (FlowStatus.RUNNING, FlowStatus.CONTINUED_AS_NEW)

    @property
    def outputs(self) -> tuple[object, ...]:
        """The raw output values of the completions, in order (a dexviz convenience)."""
        return tuple(completion.value for completion in self.completions)

    def single_output(self, output_type: type[OutputT]) -> OutputT:
        """Return the one output, decoded as ``output_type``.

        Raises:
            ValueError: If the run is not terminal, or has zero or several outputs.
            ValueMappingError: If the output does not fit ``output_type``.
        """
        if not self.is_terminal:
            raise ValueError(f"the Flow result is not terminal (status {self.status.name})")
        if len(self.completions) != 1:
            sources = ", ".join(c.step_execution_id for c in self.completions) or "none"
            raise ValueError(
                f"expected exactly one Step output, found {len(self.completions)} ({sources})"
            )
        return self.completions[0].decode(output_type)

    def to_json_ready(self) -> dict[str, Any]:
        """Return the result as JSON-ready data (outputs through :func:`to_json_ready`)."""
        return {
            "status": self.status.value,
            "completions": [
                {
                    "step_type": completion.step_type,
                    "step_execution_id": completion.step_execution_id,
                    "value": to_json_ready(completion.value),
                }
                for completion in self.completions
            ],
            "error_type": None if self.error_type is None else self.error_type.value,
            "error_message": self.error_message,
            **({"failure": self.failure} if self.failure is not None else {}),
        }

    @classmethod
    def from_json_ready(
        cls, data: Mapping[str, Any], codecs: CodecRegistry | None = None
    ) -> FlowResult:
        """Rebuild a result from :meth:`to_json_ready` data; outputs stay JSON-ready until decoded.

        Raises:
            ValueError: If the data is not shaped like a result.
        """
        try:
            completions = tuple(
                StepCompletion(item["step_type"], item["step_execution_id"], item["value"], codecs)
                for item in data["completions"]
            )
            error_type = data.get("error_type")
            return cls(
                FlowStatus(data["status"]),
                completions,
                None if error_type is None else FlowErrorType(error_type),
                data.get("error_message"),
                data.get("failure"),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(
                f"not a FlowResult's JSON-ready data ({type(error).__name__}: {error})"
            ) from None

    def __repr__(self) -> str:
        """Show status, outputs and error, deterministically."""
        parts = [self.status.name]
        if self.completions:
            parts.append(f"completions={list(self.completions)!r}")
        if self.error_type is not None:
            parts.append(f"error_type={self.error_type.name}")
        if self.error_message is not None:
            parts.append(f"error_message={self.error_message!r}")
        if self.failure is not None:
            parts.append(f"failure={self.failure!r}")
        return f"FlowResult({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class FlowInfo:
    """What ``describe_flow`` returns about a Flow's current or latest run.

    Attributes:
        flow_id: The Flow ID.
        run_id: The run ID.
        flow_type: The Flow type.
        status: The run's status.
        started_at: When the run started.
    """

    flow_id: str
    run_id: str
    flow_type: str
    status: FlowStatus
    started_at: datetime


@dataclass(frozen=True, slots=True)
class HealthInfo:
    """The engine's health, as ``health_check`` reports it.

    Attributes:
        condition: A short health word, such as ``"OK"``.
        hostname: The host running the engine.
        duration_seconds: How long the engine has been up.
    """

    condition: str
    hostname: str
    duration_seconds: int


@dataclass(frozen=True, slots=True)
class SearchFlowEntry:
    """One Flow run found by ``search_flows``.

    Attributes:
        flow_id: The Flow ID.
        run_id: The run ID.
        flow_type: The Flow type.
        status: The run's status.
        started_at: When the run started.
        closed_at: When it closed, or None while running.
        indexed_attributes: The indexed Attribute values, by index key.
    """

    flow_id: str
    run_id: str
    flow_type: str
    status: FlowStatus
    started_at: datetime
    closed_at: datetime | None
    indexed_attributes: Mapping[str, Value] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class SearchFlowsPage:
    """One page of ``search_flows`` results.

    Attributes:
        flows: The runs on this page.
        next_page_token: Pass it to get the next page; empty on the last page.
    """

    flows: Sequence[SearchFlowEntry]
    next_page_token: str = ""

    def __post_init__(self) -> None:
        """Store the flows as a tuple."""
        object.__setattr__(self, "flows", tuple(self.flows))


@dataclass(frozen=True, slots=True)
class RecoveryErrorInfo:
    """The error a recovery path reads from ``context.recovery_error``.

    Attributes:
        detail: ``str()`` of the final exception.
        error_type: Its type as ``module.QualifiedName``.
    """

    detail: str
    error_type: str


@dataclass(frozen=True, slots=True)
class ChannelMessage(Generic[ValueT]):
    """A pending Channel message, as ``pending_messages`` and ``get_channel_messages`` list it.

    Attributes:
        message_id: The message's ID.
        value: The message's value.
    """

    message_id: str
    value: ValueT

    def __repr__(self) -> str:
        """Show the ID and the value (no memory addresses)."""
        return f"ChannelMessage({self.message_id!r}, {_safe_repr(self.value)})"
