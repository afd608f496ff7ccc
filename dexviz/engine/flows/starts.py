"""Starting runs: start_flow with ID reuse, start delay, initial Attributes, and Flow retries."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import Decisions, Move
from dexviz.engine.core.errors import service_error
from dexviz.engine.core.spec import check_flow_id, flow_spec
from dexviz.engine.core.state import FlowRun
from dexviz.engine.core.stored_options import start_payload
from dexviz.engine.core.units import DelayedStart, FlowRetry, Unit
from dexviz.engine.core.uuids import uuid4_bits, uuid_text
from dexviz.engine.flows.continue_as_new import ContinueAsNew
from dexviz.engine.flows.timeouts import FlowTimeouts
from dexviz.history.event import Payload
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.definitions import FlowDefinition
from dexviz.sdk.errors import FlowAlreadyStartedError, FlowDefinitionError
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.results import FlowErrorType, FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import Committer

_DEFAULT_START_OPTIONS = StartFlowOptions()
"""Shared by every start without options (frozen): a parked Flow does not carry its own."""
_NO_TIMEOUT = {"timeout_s": None, "timeout_policy": None}
"""The timeout members of a start without a Flow timeout."""


def started_payload(
    spec: dict[str, Any],
    ready_input: Any,
    start_execution_id: str | None,
    initial: tuple[dict[str, Any], ...],
    live: bool,
    seed: int,
    timeouts: tuple[tuple[str, Any], ...],
    options: StartFlowOptions,
) -> dict[str, Any]:
    """The payload of a new run's FlowStartedOrContinued (options are frozen)."""
    return {
        "flow": spec,
        "input": ready_input,
        "start_execution_id": start_execution_id,
        "initial_attributes": list(initial),
        "continued": False,
        "mode": "live" if live else "simulation",
        "seed": seed,
        **(dict(timeouts) if timeouts else _NO_TIMEOUT),
        **start_payload(options),
    }


class StartedPayload(Payload):
    """A new run's FlowStartedOrContinued payload: the start's values in its own slots.

    The same dict :func:`started_payload` builds, built on first read; one object instead of a
    ``LazyPayload`` and its argument tuple (a parked Flow keeps it: ~40 B less).
    """

    __slots__ = ("_spec", "_ready", "_start_id", "_initial", "_live", "_seed", "_timeouts",
                 "_options")  # fmt: skip

    def __init__(
        self,
        spec: dict[str, Any],
        ready_input: Any,
        start_execution_id: str | None,
        initial: tuple[dict[str, Any], ...],
        live: bool,
        seed: int,
        timeouts: tuple[tuple[str, Any], ...],
        options: StartFlowOptions,
    ) -> None:
        self._value = None
        self._spec = spec
        self._ready = ready_input
        self._start_id = start_execution_id
        self._initial = initial
        self._live = live
        self._seed = seed
        self._timeouts = timeouts
        self._options = options

    def _make(self) -> dict[str, Any]:
        return started_payload(
            self._spec, self._ready, self._start_id, self._initial, self._live, self._seed,
            self._timeouts, self._options,
        )  # fmt: skip


class Starts:
    """Creates runs: the first, a reused Flow id's next one, and Flow retries."""

    def __init__(
        self,
        kernel: Kernel,
        decisions: Decisions,
        timeouts: FlowTimeouts,
        continue_as_new: ContinueAsNew,
        committer: Committer,
    ) -> None:
        self._rt = kernel
        self._decisions = decisions
        self._timeouts = timeouts
        self._continue_as_new = continue_as_new
        self._committer = committer
        self._specs: dict[str, dict[str, Any]] = {}
        # One bound method shared by every run (a new one per run costs 64 bytes per Flow).
        self._message_id = kernel.message_id

    # -- starting -------------------------------------------------------------------------
    def start_flow(
        self,
        flow: Any,
        flow_id: str,
        input: Any,
        options: StartFlowOptions | None,
        *,
        generated: bool = False,
    ) -> str:
        """Create a run of a registered Flow and queue its start Step (R2, R3, R153).

        ``generated`` is True only for the engine's own child ids (``SubFlow:...``, R131).
        """
        definition = self._rt.registry.definition(flow)
        options = options or _DEFAULT_START_OPTIONS
        check_flow_id(flow_id, generated=generated)
        existing = self._rt.runs.get(flow_id)
        if existing is not None:
            return self._reuse(existing, definition, flow_id, input, options)
        return self._create_run(definition, flow_id, input, options)

    def _reuse(
        self,
        existing: FlowRun,
        definition: FlowDefinition,
        flow_id: str,
        input: Any,
        options: StartFlowOptions,
    ) -> str:
        request = options.request_id
        if (
            options.ignore_already_started
            and request is not None
            and request == getattr(existing, "request_id", None)
        ):
            return existing.run_id
        policy = options.id_reuse_policy.name
        if policy == "DEFAULT":
            # The server resolves an unspecified policy to allow-if-not-running (R140).
            policy = "ALLOW_IF_NOT_RUNNING"
        running = existing.status is FlowStatus.RUNNING
        allowed = (
            (policy == "ALLOW_IF_NOT_RUNNING" and not running)
            or (policy == "ALLOW_IF_PREVIOUS_FAILED" and existing.status is FlowStatus.FAILED)
            or policy == "ALLOW_TERMINATE_IF_RUNNING"
        )
        if not allowed:
            raise service_error(
                FlowAlreadyStartedError,
                f"already started (run {existing.run_id})",
                flow_id=flow_id,
                operation="start_flow",
            )
        if running:
            self._decisions.close(existing, FlowStatus.TERMINATED)
            self._committer.commit()
        self._rt.previous_runs.setdefault(flow_id, []).append(existing)
        return self._create_run(definition, flow_id, input, options)

    def new_run(self, definition: FlowDefinition, flow_id: str) -> FlowRun:
        """A fresh run; its events continue the Flow's history numbering after earlier runs."""
        run_id = uuid_text(uuid4_bits(self._rt.ids.getrandbits(128)))
        run = FlowRun(flow_id, run_id, definition, self._rt.now())
        run.message_ids = self._message_id
        earlier = self._rt.previous_runs.get(flow_id)
        if earlier:
            run.seq = max(r.seq for r in earlier)
        return run

    def _create_run(
        self, definition: FlowDefinition, flow_id: str, input: Any, options: StartFlowOptions
    ) -> str:
        start = definition.start
        if start is None and input is not None:
            raise FlowDefinitionError(
                f"Flow {definition.flow_type!r} has no start Step; start it with input None"
            )
        value = None
        if start is not None:
            value = self._rt.codecs.roundtrip(
                start.input_type, input, operation=f"Flow {definition.flow_type!r}: start input"
            )
        run = self.new_run(definition, flow_id)
        # Rarely set: written only when given, so a run without them keeps no instance dict.
        if options.request_id is not None:
            run.request_id = options.request_id
        if options.config_override is not None:
            run.config = options.config_override
        self._continue_as_new.watch(run)
        self._rt.runs[flow_id] = run
        initial = self._initial_attributes(run, options)
        execution = (
            self._decisions.new_execution(run, Move(start, value, None), "__start__")
            if start
            else None
        )
        spec = self._spec(definition)
        ready = to_json_ready(value)
        timeouts = self._timeouts.start(run, options)
        # Built on first read: a parked Flow keeps only these values, not the payload dict.
        payload = StartedPayload(
            spec,
            ready,
            execution.execution_id if execution else None,
            tuple(initial),
            self._rt.live,
            self._rt.seed,
            tuple(timeouts.items()) if timeouts != _NO_TIMEOUT else (),
            options,
        )
        self._rt.recorder.emit(run, EventKind.FLOW_STARTED_OR_CONTINUED, None, payload)
        run.start_options = options
        run.start_input = value
        if execution is not None:
            delay = options.start_delay.total_seconds() if options.start_delay else 0
            if delay > 0:
                # The Flow is RUNNING at once; its start Step runs after the delay (R141).
                self._rt.call_at(
                    self._rt.now() + int(delay * 1e9), DelayedStart.of(self._rt, run, execution)
                )
            else:
                self._decisions.announce(run, execution, "start")
        self._committer.commit()
        return run.run_id

    def _initial_attributes(self, run: FlowRun, options: StartFlowOptions) -> list[dict[str, Any]]:
        written: list[dict[str, Any]] = []
        for attribute, instance, value in options.initial_attributes:
            if run.definition.attributes.get(attribute.name) != attribute:
                raise FlowDefinitionError(
                    f"Flow {run.flow_type!r}: initial Attribute {attribute.name!r} is not declared"
                )
            key = attribute.physical_name(instance)
            run.attributes[key] = self._rt.codecs.roundtrip(
                attribute.value_type, value, operation=f"initial {key}"
            )
            written.append({"attribute": key, "value": to_json_ready(run.attributes[key])})
        return written

    def _spec(self, definition: FlowDefinition) -> dict[str, Any]:
        spec = self._specs.get(definition.flow_type)
        if spec is None:
            spec = self._specs[definition.flow_type] = flow_spec(definition)
        return spec

    def schedule_retry(self, run: FlowRun) -> bool:
        """Schedule the next run of a failed run under its Flow retry policy (R11)."""
        options = run.start_options
        policy = options.retry_policy if options is not None else None
        # CLIENT_API_FAILED (stop with FAIL) is the client's decision, not a retryable failure.
        retryable = (
            run.status is FlowStatus.FAILED
            and run.error_type is not FlowErrorType.CLIENT_API_FAILED
        )
        if policy is None or not retryable:
            return False
        delay = policy.backoff(run.attempt)
        elapsed = timedelta(microseconds=(self._rt.now() - run.started_ns) / 1000)
        if not policy.should_retry(run.attempt, elapsed, delay):
            return False
        run.retry_pending = True
        due = self._rt.now() + int(delay.total_seconds() * 1e9)
        self._rt.call_at(due, FlowRetry.of(self._rt, run, None))
        return True

    def run_delayed_start(self, unit: Unit) -> None:
        """A DelayedStart unit: the start Step of a run whose start delay passed is announced."""
        run, ex = unit[1], unit[2]
        if run.is_open and ex.active:
            self._decisions.announce(run, ex, "start")

    def run_retry(self, unit: Unit) -> None:
        """A FlowRetry unit: see :meth:`retry`."""
        self.retry(unit[1])

    def retry(self, failed: FlowRun) -> None:
        """Start a failed run over (a FlowRetry unit), unless its Flow id moved on."""
        # A retried run starts over with the original input and initial Attributes (R12).
        if self._rt.runs.get(failed.flow_id) is not failed:
            return
        self._rt.previous_runs.setdefault(failed.flow_id, []).append(failed)
        del self._rt.runs[failed.flow_id]
        self._create_run(
            failed.definition, failed.flow_id, failed.start_input, failed.start_options
        )
        self._rt.runs[failed.flow_id].attempt = failed.attempt + 1
        failed.retry_pending = False
