"""Recovery: an engine opened on a store that holds Flow runs resumes every open one.

State is rebuilt by folding each run's stored history (:mod:`dexviz.engine.core.recovery_fold`):
the history describes every change a commit makes, so the fold gives the state of the run at its
last commit, with nothing else stored. Then each active execution resumes where it was:

- queued, or satisfied (its wait took messages; its Execute had not committed): its method is
  queued again, with the reserved messages it took;
- waiting: its Wait is rebuilt from the recorded description, its timers keep their stored due
  times, it is indexed as a waiter again, and SubFlow children are linked back;
- an attempt that was running when the process died re-runs as a new attempt (Dex's
  at-least-once contract): an ``AttemptFailed`` with reason ``crash`` closes the lost attempt;
- an attempt waiting for its retry backoff runs at the stored retry time.

The seeded id source continues exactly (each stored message id and run id took a known number
of its words); the choice source is reseeded from the seed and the number of stored events,
since the ready work after a crash is not what it was.

A ``Recovered`` event opens the resumed part of each open run. Its run id and sequence numbers
continue, so every view shows a run that spans a crash as one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import DEFAULT_OPTIONS
from dexviz.engine.core.recovery_fold import fold_run, split_runs
from dexviz.engine.core.recovery_records import ExecutionFold, RunFold, StoredMessage
from dexviz.engine.core.state import Execution, FlowRun, Message, Phase, TimerState
from dexviz.engine.core.stored_options import retry_policy
from dexviz.engine.core.units import DelayedStart, ResumeMethod, TimerFired
from dexviz.engine.flows.timeouts import TIMEOUT_STEP_TYPE
from dexviz.history.instance_names import decoded_key
from dexviz.history.kinds import EventKind
from dexviz.sdk.channel import Channel
from dexviz.sdk.condition import ChannelCondition, Condition, SubFlowCondition, TimerCondition
from dexviz.sdk.definitions import FlowDefinition
from dexviz.sdk.errors import FlowDefinitionError
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.results import FlowErrorType, FlowStatus, RecoveryErrorInfo, StepCompletion
from dexviz.sdk.subflow import subflow_id
from dexviz.sdk.wait import ConditionCombination, Wait, WaitKind

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime

CRASH_ERROR_TYPE = "dexviz.engine.recovery.EngineStopped"
"""The ``error_type`` of the AttemptFailed that closes an attempt lost in a crash."""


class RecoveryError(RuntimeError):
    """A stored run cannot be resumed by this engine (for example, its Flow is not registered)."""


@dataclass(frozen=True)
class RecoveryReport:
    """What an engine resumed when it opened its store."""

    open_runs: tuple[str, ...]
    closed_runs: tuple[str, ...]
    rerun_attempts: tuple[tuple[str, str, str, int], ...]

    @classmethod
    def empty(cls) -> RecoveryReport:
        """Nothing was stored: nothing resumed."""
        return cls((), (), ())


class Recovery:
    """Rebuilds the runtime's runs from its store, then resumes the open ones."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._folds: dict[str, RunFold] = {}
        self._reruns: list[tuple[str, str, str, int]] = []

    def recover(self) -> RecoveryReport:
        """Load every stored Flow id; resume each open run; commit the ``Recovered`` events."""
        rt = self._rt
        flow_ids = rt.store.flow_ids()
        if not flow_ids:
            return RecoveryReport.empty()
        self._load_all(flow_ids)
        open_ids = [f for f, fold in self._folds.items() if fold.is_open]
        if getattr(rt.store, "readonly", False):
            # A reader sees the runs as stored; only the writer resumes them.
            return RecoveryReport((), tuple(self._folds), ())
        for flow_id, fold in self._folds.items():
            if not fold.is_open and fold.retry_policy:
                rt.starts.schedule_retry(rt.runs[flow_id])  # a retry the crash cut off
        for flow_id in open_ids:
            self._resume(rt.runs[flow_id], self._folds[flow_id])
        for flow_id in open_ids:
            run = rt.runs[flow_id]
            for ex in list(run.executions.values()):
                if ex.phase is Phase.WAITING:
                    rt.waits.try_satisfy(run, ex)
        rt.commit()
        closed = tuple(f for f in self._folds if f not in open_ids)
        return RecoveryReport(tuple(open_ids), closed, tuple(self._reruns))

    # -- loading ------------------------------------------------------------------------------
    def _load_all(self, flow_ids: tuple[str, ...]) -> None:
        """Fold every stored run; set the clock and the seeded sources after what is stored."""
        rt = self._rt
        last_time, total, words = 0, 0, 0
        for flow_id in flow_ids:
            events = list(rt.store.history(flow_id))
            total += len(events)
            last_time = max(last_time, events[-1].time_ns) if events else last_time
            words += _id_words(events)
            try:
                self._load(flow_id, events)
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                # A damaged or hostile history: name the Flow and the store, never crash raw.
                where = getattr(rt.store, "path", type(rt.store).__name__)
                raise RecoveryError(
                    f"{where}: Flow {flow_id!r} cannot be rebuilt from its stored history "
                    f"({type(error).__name__}: {error})"
                ) from error
        # The id source continues exactly where the last commit left it: each stored message
        # id and run id took a known number of its 32-bit words.
        rt.ids.seed(f"dexviz-run-ids:{rt.seed}")
        if words:
            rt.ids.getrandbits(32 * words)
        # The choice source cannot be replayed (the ready work after a crash differs); it is
        # reseeded from the seed and what is stored, so the same file and seed resume alike.
        rt.scheduler.rng.seed(f"dexviz-recovered:{rt.seed}:{total}")
        rt.scheduler.advance_to(last_time)  # live too: a wall clock stepped back since

    def _load(self, flow_id: str, events: list[Any]) -> None:
        rt = self._rt
        known: dict[str, StoredMessage] = {}
        runs = split_runs(events)
        failed_before = 0
        previous: RunFold | None = None
        for number, run_events in enumerate(runs):
            fold = previous = fold_run(run_events, known, previous)
            known.update(fold.held)
            for queue in fold.queues.values():
                known.update((m.message_id, m) for m in queue)
            run = self._run(flow_id, fold, events[-1].seq)
            # A Flow retry is the next run after a failed one (R11): count the attempts.
            run.attempt = failed_before + 1 if fold.retry_policy else 1
            failed_before = failed_before + 1 if run.status is FlowStatus.FAILED else 0
            if number < len(runs) - 1:
                rt.previous_runs.setdefault(flow_id, []).append(run)
            else:
                self._restore_values(run, fold)
                rt.runs[flow_id] = run
                self._folds[flow_id] = fold

    def _definition(self, flow_id: str, fold: RunFold) -> FlowDefinition:
        try:
            return self._rt.registry.definition(fold.flow_type)
        except FlowDefinitionError:
            raise RecoveryError(
                f"the store holds Flow {flow_id!r} (run {fold.run_id}) of type "
                f"{fold.flow_type!r}, which is not registered with this Engine; register it to "
                "resume or read the run"
            ) from None

    def _run(self, flow_id: str, fold: RunFold, last_seq: int) -> FlowRun:
        definition = self._definition(flow_id, fold)
        run = FlowRun(flow_id, fold.run_id, definition, fold.started_ns)
        run.seq = last_seq
        run.message_ids = self._rt.message_id
        run.completions = [StepCompletion(t, e, v) for t, e, v in fold.completions]
        run.graceful_requested = fold.graceful_requested
        run.counters = dict(fold.counters)
        run.message_count = fold.message_count
        if fold.closed is not None:
            run.status = FlowStatus[fold.closed["status"]]
            error = fold.closed.get("error_type")
            run.error_type = FlowErrorType[error] if error else None
            run.error_message = fold.closed.get("error_message")
            run.closed_ns = fold.closed_ns
            run.completions = [
                StepCompletion(o["step_type"], o["execution_id"], o["value"])
                for o in fold.closed.get("outputs", ())
            ]
        return run

    # -- resuming -----------------------------------------------------------------------------
    def _restore_values(self, run: FlowRun, fold: RunFold) -> None:
        """The run's start input, Attributes and queued messages, decoded to their types."""
        definition = run.definition
        start = definition.start
        if start is not None:
            run.start_input = self._decode(start.input_type, fold.start_input)
        run.start_options = _start_options(fold)
        for key, value in fold.attributes.items():
            attribute = definition.attributes.get(key.split("/", 1)[0])
            run.attributes[key] = self._decode(attribute.value_type if attribute else Any, value)
        for channel, queue in fold.queues.items():
            run.queue(channel).extend(self._message(run, m) for m in queue)

    def _resume(self, run: FlowRun, fold: RunFold) -> None:
        rt = self._rt
        active = [ex for ex in fold.executions.values() if ex.active]
        rt.recorder.emit(
            run,
            EventKind.RECOVERED,
            None,
            {
                "last_seq": fold.last_seq,
                "last_time_ns": fold.last_time_ns,
                "resumed": [{"execution_id": e.execution_id, "phase": e.phase} for e in active],
            },
        )
        timed_out = any(e.step_type == TIMEOUT_STEP_TYPE for e in fold.executions.values())
        if fold.deadline_ns is not None and not timed_out:
            rt.timeouts.resume(run, fold.timeout_policy or "FAIL", fold.deadline_ns)
        for folded in active:
            self._resume_execution(run, fold, folded)
        self._delayed_start(run, fold)

    def _delayed_start(self, run: FlowRun, fold: RunFold) -> None:
        """A start Step still in its start delay (R141) is announced at its stored time."""
        rt = self._rt
        start, ex_id = run.definition.start, fold.start_execution_id
        if not fold.start_delay_s or start is None or not ex_id or ex_id in fold.executions:
            return
        ex = Execution(ex_id, start, run.start_input, "__start__", start.options or DEFAULT_OPTIONS)
        ex.parent_key = "__start__"
        run.executions[ex_id] = ex
        run.active_count += 1
        rt.call_at(
            fold.started_ns + int(fold.start_delay_s * 1e9), DelayedStart.of(rt, run, ex)
        )

    def _resume_execution(self, run: FlowRun, fold: RunFold, folded: ExecutionFold) -> None:
        rt = self._rt
        ex = self._execution(run, folded)
        self._restore_reserved(run, fold, ex, folded)
        waited = folded.wait is not None and not folded.wait_for_failed
        if waited and folded.phase in ("execute", "satisfied"):
            self._restore_wait(run, ex, folded)
        if folded.attempt_open:
            self._abandoned(run, ex, folded)
            self._relaunch(run, ex, folded, rt.now())
        elif folded.retry_at_ns is not None and folded.phase in ("wait_for", "execute"):
            self._relaunch(run, ex, folded, folded.retry_at_ns)
        elif folded.phase == "waiting" and folded.wait is not None:
            self._wait_again(run, ex, folded)
        elif folded.phase == "satisfied":
            ex.phase = Phase.EXECUTE
            rt.invoker.start_method_soon(run, ex, "execute")
        else:
            rt.invoker.start_method_soon(run, ex, "wait_for" if ex.step.has_wait_for else "execute")

    def _restore_reserved(
        self, run: FlowRun, fold: RunFold, ex: Execution, folded: ExecutionFold
    ) -> None:
        """The messages the execution's satisfied wait took, in the order it took them."""
        for message_id in folded.reserved:
            stored = fold.held.get(message_id)
            if stored is not None:
                message = self._message(run, stored)
                ex.reserved.setdefault(message.channel, []).append(message)
                ex.consumed_values.setdefault(message.channel, []).append(message.value)

    def _execution(self, run: FlowRun, folded: ExecutionFold) -> Execution:
        if folded.step_type == TIMEOUT_STEP_TYPE:
            ex = self._rt.timeouts.handler_execution(run, folded.execution_id)
            ex.first_started_ns = folded.first_started_ns
            return ex
        step = run.definition.steps.get(folded.step_type)
        if step is None:
            raise RecoveryError(
                f"Flow {run.flow_id!r}: execution {folded.execution_id} is of Step type "
                f"{folded.step_type!r}, which Flow {run.flow_type!r} does not declare"
            )
        ex = Execution(
            folded.execution_id,
            step,
            self._decode(step.input_type, folded.input),
            folded.from_execution_id,
            step.options or DEFAULT_OPTIONS,
        )
        ex.parent_key = folded.from_execution_id
        ex.first_started_ns = folded.first_started_ns
        ex.wait_for_failed = folded.wait_for_failed
        ex.locals = dict(folded.locals)
        if folded.recovery_error is not None:
            error_type, detail = folded.recovery_error
            ex.recovery_error = RecoveryErrorInfo(detail=detail, error_type=error_type)
        run.executions[ex.execution_id] = ex
        run.active_count += 1
        return ex

    def _abandoned(self, run: FlowRun, ex: Execution, folded: ExecutionFold) -> None:
        """Close the attempt the crash cut short, so the history shows why it runs again."""
        rt = self._rt
        ex.method, ex.attempt = folded.method, folded.attempt
        self._reruns.append((run.flow_id, ex.execution_id, folded.method, folded.attempt))
        rt.recorder.emit(
            run,
            EventKind.ATTEMPT_FAILED,
            ex,
            {
                "error_type": CRASH_ERROR_TYPE,
                "error_message": f"the engine stopped before attempt {folded.attempt} committed",
                "stack_trace": "",
                "reason": "crash",
                "final": False,
                "retry_at_ns": rt.now(),
                "retry_delay_ns": 0,
            },
        )

    def _relaunch(self, run: FlowRun, ex: Execution, folded: ExecutionFold, at_ns: int) -> None:
        """Run the next attempt of the method in progress at ``at_ns``, taking its locks first."""
        rt = self._rt
        method = folded.method
        ex.phase = Phase.WAIT_FOR if method == "wait_for" else Phase.EXECUTE
        ex.method, ex.attempt = method, folded.attempt
        locks = (
            ex.options.wait_for_lock_attributes
            if method == "wait_for"
            else ex.options.execute_lock_attributes
        )
        keys = tuple(lock.physical_name for lock in locks)
        start = ResumeMethod.of(rt, run, ex, keys)
        if at_ns <= rt.now():
            rt.scheduler.call_soon(start)
        else:
            ex.pending_unit = rt.scheduler.call_at(at_ns, start)

    def _restore_wait(self, run: FlowRun, ex: Execution, folded: ExecutionFold) -> Wait:
        """The Wait an execution registered, its timers, SubFlow ids and satisfied conditions."""
        assert folded.wait is not None
        wait = self._wait(run, ex, folded.wait)
        ex.wait = wait
        ex.wait_registered_ns = folded.wait_registered_ns
        ex.satisfied_conditions = folded.satisfied_conditions
        for position, condition in enumerate(wait.timers):
            stored = folded.timers.get(position)
            timer = TimerState(position, condition.condition_id, condition.duration.total_seconds())
            timer.fire_at_ns = stored.fire_at_ns if stored else self._rt.now()
            timer.done = stored.done if stored else False
            ex.timers.append(timer)
        ex.subflow_ids = [
            subflow_id(run.flow_id, ex.execution_id, i) for i in range(len(wait.subflows))
        ]
        return wait

    def _wait_again(self, run: FlowRun, ex: Execution, folded: ExecutionFold) -> None:
        """Register a waiting execution again: its Wait, timers at their stored times, waiters."""
        rt = self._rt
        wait = self._restore_wait(run, ex, folded)
        ex.phase, ex.method, ex.attempt = Phase.WAITING, "", 0
        for timer in ex.timers:
            if not timer.done:
                timer.handle = rt.call_at(timer.fire_at_ns, TimerFired.of(rt, run, ex, timer))
        for key in {c.physical_name for c in wait.channel_conditions}:
            run.add_waiter(key, ex)
        for index, child_id in enumerate(ex.subflow_ids):
            child = rt.runs.get(child_id)
            if child is None:
                # The WaitFor committed but the crash came before this child's start did.
                rt.subflows.start_child(child_id, wait.subflows[index])
            if child is None or child.status is FlowStatus.RUNNING:
                rt.subflows.attach_parent(child_id, run, ex)

    def _wait(self, run: FlowRun, ex: Execution, description: dict[str, Any]) -> Wait:
        conditions: list[Condition] = []
        for item in description.get("conditions", ()):
            kind = item["kind"]
            if kind == "channel":
                conditions.append(_channel_condition(run, item))
            elif kind == "timer":
                seconds = timedelta(seconds=item["duration_s"])
                conditions.append(
                    TimerCondition(duration=seconds, condition_id=item["condition_id"])
                )
            else:
                child = subflow_id(run.flow_id, ex.execution_id, item["subflow_index"])
                conditions.append(self._subflow_condition(child, item))
        groups = tuple(
            ConditionCombination(tuple(conditions[i] for i in group))
            for group in description.get("combinations", ())
        )
        return Wait(
            WaitKind[description.get("kind", "SKIP_IMMEDIATELY")], tuple(conditions), groups
        )

    def _subflow_condition(self, child_id: str, item: dict[str, Any]) -> SubFlowCondition:
        """The condition of a SubFlow: its Flow and input as recorded (or as the child started)."""
        found = self._rt.runs.get(child_id)
        child = self._folds.get(child_id)
        flow_type = item.get("flow_type") or (found.flow_type if found else None)
        if flow_type is None:
            raise RecoveryError(f"SubFlow {child_id!r}: its Flow type is not in the store")
        definition = self._definition(child_id, RunFold("", flow_type=flow_type))
        data = item["input"] if "input" in item else (child.start_input if child else None)
        value = (
            self._decode(definition.start.input_type, data)
            if definition.start is not None
            else None
        )
        return SubFlowCondition(
            flow=definition.flow, input=value, condition_id=item["condition_id"]
        )

    # -- values -------------------------------------------------------------------------------
    def _decode(self, type_hint: Any, data: Any) -> Any:
        return self._rt.codecs.from_json_ready(type_hint, data, operation="recovery")

    def _message(self, run: FlowRun, stored: StoredMessage) -> Message:
        channel = run.definition.channels.get(stored.channel.split("/", 1)[0])
        value = self._decode(channel.value_type if channel else Any, stored.value)
        return Message(stored.message_id, stored.number, stored.channel, value)


def _channel_condition(run: FlowRun, item: dict[str, Any]) -> ChannelCondition:
    name, _, instance = item["channel"].partition("/")
    channel = run.definition.channels.get(name)
    if channel is None:
        raise RecoveryError(
            f"Flow {run.flow_id!r}: a stored wait names Channel {name!r}, which Flow "
            f"{run.flow_type!r} does not declare"
        )
    return ChannelCondition(
        channel=channel,
        instance=decoded_key(instance) if instance and not isinstance(channel, Channel) else None,
        at_least=item.get("at_least"),
        at_most=item.get("at_most"),
        condition_id=item.get("condition_id"),
    )


MESSAGE_ID_WORDS = 3
"""A message id draws 12 + 62 random bits: one 32-bit word, then two (Runtime.message_id)."""
RUN_ID_WORDS = 4
"""A run id draws 128 random bits: four 32-bit words."""


def _id_words(events: list[Any]) -> int:
    """How many words of the id source the stored events of one Flow id took."""
    messages = sum(1 for e in events if e.kind == EventKind.MESSAGE_PUBLISHED)
    runs = len({e.run_id for e in events})
    return MESSAGE_ID_WORDS * messages + RUN_ID_WORDS * runs


def _start_options(fold: RunFold) -> StartFlowOptions:
    """The start options the stored start recorded: timeout, Flow retries, start delay."""
    return StartFlowOptions(
        timeout=timedelta(seconds=fold.timeout_s) if fold.timeout_s else None,
        retry_policy=retry_policy(fold.retry_policy),
        start_delay=timedelta(seconds=fold.start_delay_s) if fold.start_delay_s else None,
    )
