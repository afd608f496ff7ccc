"""Client operations on the runtime: publish, Attributes, stop, skip_timer (R52, R154-R158)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.waits import find_timer
from dexviz.engine.core.effects import emit_published
from dexviz.engine.core.errors import service_error
from dexviz.engine.core.state import FlowRun, Phase
from dexviz.engine.flows.timeouts import TIMEOUT_STEP_TYPE
from dexviz.history.kinds import EventKind
from dexviz.sdk.attribute import AttributeMap
from dexviz.sdk.channel import ChannelMap
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.errors import ChannelMessageNotFoundError, FlowNotActiveError, FlowNotFoundError
from dexviz.sdk.flow_options import FlowConfig, StopFlowOptions, StopType
from dexviz.sdk.results import ChannelMessage, FlowErrorType, FlowStatus
from dexviz.sdk.timer import StepExecutionId, TimerId

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


def existing_run(rt: Runtime, flow_id: str, operation: str) -> FlowRun:
    """The current run of ``flow_id``; FlowNotFoundError if there is none."""
    run = rt.runs.get(flow_id)
    if run is None:
        raise service_error(
            FlowNotFoundError, "Flow not found", flow_id=flow_id, operation=operation
        )
    return run


def active_run(rt: Runtime, flow_id: str, operation: str) -> FlowRun:
    """The current run of ``flow_id`` if it is open; FlowNotActiveError otherwise (R5)."""
    run = rt.runs.get(flow_id)
    if run is None or not run.is_open:
        state = "not found" if run is None else f"not active ({run.status.name})"
        raise service_error(
            FlowNotActiveError, f"the Flow is {state}", flow_id=flow_id, operation=operation
        )
    return run


def _split(definition: Any, args: tuple[Any, ...], what: str) -> tuple[str | None, tuple[Any, ...]]:
    if isinstance(definition, (AttributeMap, ChannelMap)):
        if not args:
            raise TypeError(f"{what} on map {definition.name!r} needs an instance key")
        return args[0], args[1:]
    return None, args


def publish(rt: Runtime, flow_id: str, channel: Any, *args: Any) -> list[str]:
    """Append messages from outside in one commit, as ChannelExternalPublish (R52, R157)."""
    run = active_run(rt, flow_id, "publish")
    instance, values = _split(channel, args, "publish")
    if run.definition.channels.get(channel.name) != channel:
        raise ValueError(f"Flow {run.flow_type!r} does not declare Channel {channel.name!r}")
    if not values:
        return []
    key = channel.physical_name(instance)
    copies = [
        rt.codecs.roundtrip(channel.value_type, v, operation=f"publish to {key!r}") for v in values
    ]
    messages = []
    for value in copies:
        message = run.next_message(key, value)
        run.queue(key).append(message)
        messages.append(message)
    rt.recorder.emit(
        run,
        EventKind.CHANNEL_EXTERNAL_PUBLISH,
        None,
        {
            "messages": [
                {"channel": key, "message_id": m.message_id, "value": to_json_ready(m.value)}
                for m in messages
            ],
        },
    )
    emit_published(rt.recorder, run, messages, "client")
    rt.waits.wake(run, {key})
    rt.commit()
    return [m.message_id for m in messages]


def get_attribute(rt: Runtime, flow_id: str, attribute: Any, *args: Any) -> Any:
    """Read an Attribute of the current or latest run; None when unset (R75, R158)."""
    run = existing_run(rt, flow_id, "get_attribute")
    instance, _ = _split(attribute, args, "get_attribute")
    if run.definition.attributes.get(str(getattr(attribute, "name", ""))) != attribute:
        # An undeclared Attribute would read as "unset" forever; say what is wrong instead.
        raise ValueError(
            f"get_attribute: Flow {run.flow_type!r} does not declare Attribute "
            f"{getattr(attribute, 'name', attribute)!r} in its persistence schema"
        )
    value = run.attributes.get(attribute.physical_name(instance))
    return (
        None
        if value is None
        else rt.codecs.roundtrip(attribute.value_type, value, operation="get_attribute")
    )


def set_attribute(rt: Runtime, flow_id: str, attribute: Any, *args: Any) -> None:
    """Write an Attribute of an active run in one commit (R78, R158)."""
    run = active_run(rt, flow_id, "set_attribute")
    instance, rest = _split(attribute, args, "set_attribute")
    if len(rest) != 1:
        raise TypeError("set_attribute takes exactly one value")
    if run.definition.attributes.get(attribute.name) != attribute:
        raise ValueError(f"Flow {run.flow_type!r} does not declare Attribute {attribute.name!r}")
    key = attribute.physical_name(instance)
    value = rest[0]
    if value is None:
        run.attributes.pop(key, None)
    else:
        run.attributes[key] = rt.codecs.roundtrip(
            attribute.value_type, value, operation=f"set_attribute {key!r}"
        )
    rt.recorder.emit(
        run,
        EventKind.RPC_EXECUTION_COMPLETED,
        None,
        {
            "rpc": "SetAttributes",
            "input": None,
            "output": None,
            "writes": [{"attribute": key, "value": to_json_ready(value), "deleted": value is None}],
            "published": [],
            "next": [],
            "canceled": [],
            "is_set_attribute_api": True,
        },
        method="rpc",
    )
    rt.commit()


def get_channel_messages(
    rt: Runtime, flow_id: str, channel: Any, *args: Any
) -> tuple[ChannelMessage[Any], ...]:
    """The pending messages of a Channel (or map instance), FIFO."""
    run = existing_run(rt, flow_id, "get_channel_messages")
    instance, _ = _split(channel, args, "get_channel_messages")
    return tuple(
        ChannelMessage(m.message_id, m.value)
        for m in run.queues_view.get(channel.physical_name(instance), ())
    )


def stop_flow(rt: Runtime, flow_id: str, options: StopFlowOptions | None = None) -> None:
    """Stop a run: CANCEL, FAIL (with reason) or TERMINATE (R154)."""
    options = options or StopFlowOptions()
    run = rt.runs.get(flow_id)
    if run is None or run.status is not FlowStatus.RUNNING:
        active_run(rt, flow_id, "stop_flow")
        return
    if run.closing and options.type is not StopType.TERMINATE:
        return  # the first CANCEL or FAIL wins
    if options.type is StopType.CANCEL:
        rt.decisions.close(run, FlowStatus.CANCELED)
    elif options.type is StopType.FAIL:
        rt.decisions.close(
            run,
            FlowStatus.FAILED,
            FlowErrorType.CLIENT_API_FAILED,
            options.reason or "fail by client",
        )
    else:
        rt.decisions.close(run, FlowStatus.TERMINATED)
    rt.commit()


def skip_timer(
    rt: Runtime, flow_id: str, execution: StepExecutionId | str, timer_id: TimerId
) -> bool:
    """Fire one pending timer now, or remember the skip for a timer not yet created (R127, R128)."""
    run = active_run(rt, flow_id, "skip_timer")
    target = (
        execution if isinstance(execution, StepExecutionId) else StepExecutionId.parse(execution)
    )
    execution_id = str(target)
    if target.step_type == TIMEOUT_STEP_TYPE:
        fired = rt.timeouts.fire(run)
        rt.commit()
        return fired
    ex = run.executions.get(execution_id)
    if ex is None or ex.phase in (Phase.QUEUED, Phase.WAIT_FOR):
        rt.add_stale_skip(run, execution_id, timer_id)
        return False
    timer = find_timer(ex, timer_id) if ex.phase is Phase.WAITING else None
    if timer is None or timer.done:
        return False
    skipped = rt.waits.complete_timer(run, ex, timer, True)
    rt.commit()
    return skipped


def delete_channel_message(rt: Runtime, flow_id: str, channel: Any, *args: Any) -> None:
    """Delete one pending message by id from outside (ChannelMessageNotFoundError if gone)."""
    run = active_run(rt, flow_id, "delete_channel_message")
    instance, rest = _split(channel, args, "delete_channel_message")
    if len(rest) != 1:
        raise TypeError("delete_channel_message takes a message id")
    key = channel.physical_name(instance)
    queue = run.queues_view.get(key)
    found = next((m for m in queue or () if m.message_id == rest[0]), None)
    if found is None or queue is None:
        raise service_error(
            ChannelMessageNotFoundError,
            f"message {rest[0]!r} is not pending in {key!r}",
            flow_id=flow_id,
            operation="delete_channel_message",
        )
    queue.remove(found)
    rt.commit()


def update_flow_config(rt: Runtime, flow_id: str, config: FlowConfig) -> None:
    """Merge the non-None fields of ``config`` into an active run's config (R163)."""
    run = active_run(rt, flow_id, "update_flow_config")
    run.config = run.config.merged(config) if run.config is not None else config
    rt.continue_as_new.watch(run)
