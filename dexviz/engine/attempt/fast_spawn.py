"""The fast commit's new executions and publications, recorded as the general path records them.

:func:`spawn` creates, records and queues the executions of a fast commit's checked moves
(each queued first attempt names ``starter``, the FastPath, as the one that runs it);
:func:`record_published` records its MessagePublished events. Each inlines the general path's
steps (named below), as :mod:`dexviz.engine.attempt.fast` does; see its docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import CreatedPayload
from dexviz.engine.core.effects import published_event_payload
from dexviz.engine.core.state import Execution, FlowRun, Message
from dexviz.engine.core.units import MethodStarter, QueuedStart
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

if TYPE_CHECKING:
    from dexviz.engine.attempt.step_settings import StepSettings
    from dexviz.engine.core.kernel import Kernel

_CREATED = EventKind.STEP_EXECUTION_CREATED
_PUBLISHED = EventKind.MESSAGE_PUBLISHED
_new_event = tuple.__new__
_new_tuple = tuple.__new__


def message_ids(messages: list[Message]) -> tuple[str, ...]:
    """The message ids, in publication order."""
    if len(messages) == 1:
        return (messages[0].message_id,)
    return tuple([m.message_id for m in messages])


def record_published(
    rt: Kernel, run: FlowRun, ex: Execution, messages: list[Message], events: list[Event]
) -> None:
    """effects.emit_published, inlined: one MessagePublished per message, in order.

    Mirrors dexviz.engine.core.effects.emit_published.
    """
    now = rt.scheduler.now_ns
    source = ex.execution_id
    flow_id, run_id, step_type = run.flow_id, run.run_id, ex.step.step_type
    method, attempt = ex.method or None, ex.attempt or None
    for message in messages:
        run.seq += 1
        payload = published_event_payload(message, source)
        events.append(_new_event(Event, (run.seq, now, _PUBLISHED, flow_id, run_id, source,
                                         step_type, method, attempt, payload)))  # fmt: skip


def spawn(
    rt: Kernel,
    starter: MethodStarter,
    run: FlowRun,
    source: str,
    moves: list[Any],
    events: list[Event],
) -> Execution | tuple[Execution, ...]:
    """Create, record and queue the executions of checked moves, in movement order (R16).

    Decisions.create_execution and announce, inlined (mirrors
    dexviz.engine.commit.decide.Decisions.create_execution and
    dexviz.engine.commit.decide.Decisions.announce): ids are given in movement order and
    each StepExecutionCreated follows in the same order, as on the general path.
    """
    now = rt.scheduler.now_ns
    flow_id, run_id = run.flow_id, run.run_id
    ready = rt.scheduler._ready if rt.sim is not None else None
    executions = run.executions
    first: Execution | None = None
    more: list[Execution] | None = None
    settings: StepSettings | None = None
    # The moves alternate settings and input: a pair per two items, without the two
    # slices and the zip a transition would otherwise build.
    for item in moves:
        if settings is None:
            settings = item
            continue
        value = item
        step_type = settings.step_type
        # FlowRun.next_execution_id, inlined for a Step type the run has numbered before
        # (mirrors dexviz.engine.core.state.FlowRun.next_execution_id).
        if step_type == run._first_type:
            number = run._first_count = run._first_count + 1
            execution_id = f"{step_type}-{number}"
        elif run._more_counts is not None and step_type in run._more_counts:
            counts = run._more_counts
            number = counts[step_type] = counts[step_type] + 1
            execution_id = f"{step_type}-{number}"
        else:
            execution_id = run.next_execution_id(step_type)
        execution = Execution(execution_id, settings.step, value, source, settings.options)
        execution.parent_key = source
        executions[execution_id] = execution
        run.active_count += 1
        payload: Any = (
            {"input": value, "from_execution_id": source, "reason": "decision",
             "has_wait_for": settings.has_wait_for}
            if value is None or type(value) is settings.input_type
            # Decisions.announce's payload, for an input that is not JSON-ready as it is.
            else CreatedPayload(value, source, "decision", settings.has_wait_for)
        )  # fmt: skip
        run.seq += 1
        events.append(
            _new_event(Event, (run.seq, now, _CREATED, flow_id, run_id, execution_id,
                               step_type, None, None, payload))
        )  # fmt: skip
        # Kernel.start_method_soon, inlined (mirrors
        # dexviz.engine.core.kernel.Kernel.start_method_soon): a new execution is QUEUED
        # already.
        method = execution.method = settings.first_method
        unit = _new_tuple(QueuedStart, (starter, run, execution, method, settings))
        if ready is not None:
            ready.append(unit)
        else:
            rt.scheduler.call_soon(unit)
        if first is None:
            first = execution
        elif more is None:
            more = [first, execution]
        else:
            more.append(execution)
        settings = None
    assert first is not None
    return first if more is None else tuple(more)
