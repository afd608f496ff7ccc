"""InvocationContext: the Context a handler gets; it stages writes until the attempt commits."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from dexviz.engine.core.state import Execution, FlowRun
from dexviz.history.instance_names import decoded_key
from dexviz.sdk.attribute import AttributeMap, type_default
from dexviz.sdk.channel import Channel
from dexviz.sdk.codec import CodecRegistry
from dexviz.sdk.context import ABSENT, AsyncContext
from dexviz.sdk.errors import ChannelMessagesNotLoadedError, FlowDefinitionError
from dexviz.sdk.results import ChannelMessage, FlowResult, RecoveryErrorInfo
from dexviz.sdk.step_output import StepOutput, stream_output

T = TypeVar("T")

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
DELETED: Any = object()
"""Marks a staged Attribute deletion."""


def record_heartbeat(ex: Execution, value: Any, now_ns: int) -> None:
    """Record a beat of ``ex`` at ``now_ns`` and its checkpoint ``value`` (if any)."""
    ex.last_beat_ns = now_ns
    ex.has_heartbeat = value is not ABSENT
    ex.last_heartbeat = None if value is ABSENT else value


_new = object.__new__
_NOTHING: Mapping[str, Any] = MappingProxyType({})
"""What an attempt that staged no write, local or event reads (shared, read-only)."""


class Staged:
    """Everything one attempt stages; committed together only if the attempt succeeds (R21).

    A plain ``__slots__`` class made by an attempt's first staged effect. Most of those stage
    one publication and nothing else, so writes, deletions, locals and events start as shared
    read-only empties and get containers of their own at their first entry (the methods
    below); readers only read them.
    """

    __slots__ = ("writes", "publishes", "deletes", "locals", "events")

    def __init__(self) -> None:
        self.publishes: list[tuple[str, Any]] = []
        self.writes: Mapping[str, tuple[Any, Any]] = _NOTHING
        self.deletes: Sequence[tuple[str, str]] = ()
        self.locals: Mapping[str, Any] = _NOTHING
        self.events: Mapping[str, Any] = _NOTHING

    def write(self, key: str, entry: tuple[Any, Any]) -> None:
        """Stage an Attribute write (``entry`` is its definition and value, or DELETED)."""
        writes = self.writes if type(self.writes) is dict else {}
        writes[key] = entry
        self.writes = writes

    def delete(self, key: str, message_id: str) -> None:
        """Stage the deletion of message ``message_id`` from queue ``key``."""
        deletes = self.deletes if type(self.deletes) is list else []
        deletes.append((key, message_id))
        self.deletes = deletes

    def set_local(self, key: str, value: Any) -> None:
        """Stage a step-execution local."""
        staged = self.locals if type(self.locals) is dict else {}
        staged[key] = value
        self.locals = staged

    def add_event(self, name: str, value: Any) -> None:
        """Stage a named event."""
        events = self.events if type(self.events) is dict else {}
        events[name] = value
        self.events = events


class InvocationContext(AsyncContext):
    """One handler invocation's Context: ids, attempt, snapshot reads and staged effects.

    One is made per attempt, so it is a ``__slots__`` object whose costlier parts are made on
    first use: the staged effects (most attempts stage nothing, or one publication) and the
    ``where`` text that names the Flow, Step and method in error messages.
    """

    __slots__ = ("_run", "_execution", "_method", "_attempt", "_snapshot", "_codecs",
                 "_where_text", "_rpc_name", "_runtime", "_subflows", "rpc_options", "is_async",
                 "_staged", "canceled")  # fmt: skip

    def __init__(
        self,
        run: FlowRun,
        execution: Execution | None,
        method: str,
        attempt: int,
        snapshot: dict[str, Any],
        codecs: CodecRegistry,
        *,
        where: str | None = None,
        rpc_name: str | None = None,
        runtime: Any = None,
        subflows: Any = None,
    ) -> None:
        self._run = run
        self._execution = execution
        self._method = method
        self._attempt = attempt
        self._snapshot = snapshot
        self._codecs = codecs
        self._where_text = where
        self._rpc_name = rpc_name
        # A Step attempt's heartbeats and Stream writes go to the runtime (None for an RPC).
        self._runtime = runtime
        self._subflows = subflows
        self.rpc_options: Any = None
        self.is_async = False
        self._staged: Staged | None = None
        self.canceled = False

    @classmethod
    def first_attempt(
        cls, run: FlowRun, execution: Execution, method: str, snapshot: dict[str, Any],
        runtime: Any,
    ) -> InvocationContext:
        """The context of attempt 1 of a Step method: ``__init__``'s result, without its call.

        The fast path makes one per Step transition, and setting the slots here costs less
        than a call through ``__init__``'s keywords; it sets every slot ``__init__`` does.
        """
        ctx = _new(cls)
        ctx._run = run
        ctx._execution = execution
        ctx._method = method
        ctx._attempt = 1
        ctx._snapshot = snapshot
        ctx._codecs = runtime.codecs
        ctx._where_text = None
        ctx._rpc_name = None
        ctx._runtime = runtime
        ctx._subflows = runtime.subflows
        ctx.rpc_options = None
        ctx.is_async = False
        ctx._staged = None
        ctx.canceled = False
        return ctx

    def __repr__(self) -> str:
        return f"<Context {self._where} attempt {self._attempt}>"

    @property
    def _where(self) -> str:
        """``Flow 'T', Step Type-N method``: how messages name this invocation."""
        text = self._where_text
        if text is None:
            ex = self._execution
            step = ex.execution_id if ex is not None else "?"
            text = self._where_text = (
                f"Flow {self._run.definition.flow_type!r}, Step {step} {self._method}"
            )
        return text

    @property
    def staged(self) -> Staged:
        """What this attempt staged so far (created on first use)."""
        staged = self._staged
        if staged is None:
            staged = self._staged = Staged()
        return staged

    @property
    def stages_nothing(self) -> bool:
        """Whether the attempt staged no effect at all (without creating the container)."""
        return self._staged is None

    @property
    def stream_writer(self) -> Callable[[Any, Any], Any] | None:
        """How this attempt writes to a Stream now (R180); None outside WaitFor and Execute."""
        runtime, ex = self._runtime, self._execution
        if runtime is None or ex is None:
            return None
        flow_id, source = self._run.flow_id, f"#{ex.execution_id}"
        return lambda stream, value: runtime.write_stream(flow_id, stream, source, value)

    # -- identity -------------------------------------------------------------------------
    @property
    def flow_id(self) -> str:
        """The Flow id."""
        return self._run.flow_id

    @property
    def run_id(self) -> str:
        """The current run id."""
        return self._run.run_id

    @property
    def step_execution_id(self) -> str:
        """This execution's id (empty for an RPC)."""
        return self._execution.execution_id if self._execution else ""

    @property
    def from_step_execution_id(self) -> str:
        """The parent execution id, ``__start__`` or ``__rpc/<name>``."""
        return self._execution.from_execution_id if self._execution else ""

    @property
    def attempt(self) -> int:
        """The 1-based attempt of this method."""
        return self._attempt

    @property
    def recovery_error(self) -> RecoveryErrorInfo | None:
        """The error that routed this execution here, if any."""
        return self._execution.recovery_error if self._execution else None

    def has_timer_fired(self, index: int | None = None) -> bool:
        """Whether any timer (or timer ``index``) of the Wait completed (R42, R43)."""
        timers = self._execution.timers if self._execution else []
        if index is None:
            return any(t.done for t in timers)
        if not 0 <= index < len(timers):
            return False
        return timers[index].done

    def wait_for_method_failed(self) -> bool:
        """Whether Execute runs after a WaitFor failure under PROCEED (R44)."""
        return bool(self._execution and self._execution.wait_for_failed)

    def is_cancellation_requested(self) -> bool:
        """Whether a heartbeat delivered a cancellation, or this attempt timed out (R107).

        A cancel request reaches a running handler only through heartbeats: without a
        ``heartbeat_timeout`` the handler never learns of it.
        """
        return self.canceled

    # -- locals, events, heartbeat --------------------------------------------------------
    def set_step_execution_local(self, key: str, value: object) -> None:
        """Stage a local for this execution's Execute (WaitFor only, R28)."""
        if self._method != "wait_for":
            raise RuntimeError(f"{self._where}: step-execution locals can only be set in wait_for")
        self.staged.set_local(key, value)

    def get_step_execution_local(self, key: str, value_type: type[T]) -> T | None:
        """Read a local set by this execution's WaitFor (or staged by this WaitFor)."""
        del value_type
        if key in self.staged.locals:
            return self.staged.locals[key]  # type: ignore[no-any-return]
        if self._execution is None:
            return None
        return self._execution.locals.get(key)

    def record_event(self, name: str, value: object) -> None:
        """Attach a named event to the result; a name may be used once (R29)."""
        if name in self.staged.events:
            raise ValueError(f"{self._where}: event {name!r} was already recorded in this call")
        self.staged.add_event(name, value)

    def has_last_heartbeat_value(self) -> bool:
        """Whether a previous attempt left a heartbeat checkpoint."""
        return bool(self._execution and self._execution.has_heartbeat)

    def get_last_heartbeat_value(self, value_type: type[T]) -> T | None:
        """The previous attempt's checkpoint, or None."""
        del value_type
        if self._execution is None or not self._execution.has_heartbeat:
            return None
        return self._execution.last_heartbeat  # type: ignore[no-any-return]

    async def heartbeat(self, value: object = ABSENT) -> None:
        """Record progress; a value is kept for the next attempt, no value clears it."""
        self.record_heartbeat(value)

    def record_heartbeat(self, value: object = ABSENT) -> None:
        """What ``await heartbeat(v)`` and a yielded ``heartbeat(v)`` do (R107)."""
        ex = self._execution
        if self._runtime is not None and ex is not None:
            record_heartbeat(ex, value, self._runtime.now())

    # -- attributes -----------------------------------------------------------------------
    def _declared_attribute(self, definition: Any) -> None:
        declared = self._run.definition.attributes.get(getattr(definition, "name", ""))
        if declared != definition:
            raise FlowDefinitionError(
                f"{self._where}: Attribute {getattr(definition, 'name', definition)!r} is not "
                "declared in the Flow's persistence schema"
            )

    def _get_attribute(self, definition: Any, instance: str | None) -> Any:
        self._declared_attribute(definition)
        key = definition.physical_name(instance)
        if key in self.staged.writes:
            value = self.staged.writes[key][1]
        else:
            value = self._snapshot.get(key, DELETED)
        if value is DELETED:
            return type_default(definition.value_type)
        return self._codecs.roundtrip(
            definition.value_type, value, operation=f"{self._where}: read {key}"
        )

    def _set_attribute(self, definition: Any, instance: str | None, value: Any) -> None:
        self._declared_attribute(definition)
        key = definition.physical_name(instance)
        if value is not None:
            value = self._codecs.roundtrip(
                definition.value_type, value, operation=f"{self._where}: write Attribute {key!r}"
            )
        self.staged.write(key, (definition, DELETED if value is None else value))

    def _attribute_map_keys(self, definition: Any) -> tuple[str, ...]:
        self._declared_attribute(definition)
        if not isinstance(definition, AttributeMap):
            raise TypeError(f"{self._where}: {definition.name!r} is not an AttributeMap")
        prefix = definition.name + "/"
        keys = {k for k, v in self._snapshot.items() if k.startswith(prefix) and v is not DELETED}
        for key, (_, value) in self.staged.writes.items():
            if key.startswith(prefix):
                (keys.discard if value is DELETED else keys.add)(key)
        return tuple(sorted(decoded_key(k[len(prefix) :]) for k in keys))

    # -- channels -------------------------------------------------------------------------
    def _declared_channel(self, definition: Any) -> None:
        declared = self._run.definition.channels.get(getattr(definition, "name", ""))
        if declared != definition:
            raise FlowDefinitionError(
                f"{self._where}: Channel {getattr(definition, 'name', definition)!r} is not "
                "declared in the Flow's persistence schema"
            )

    def _publish_channel(self, definition: Any, instance: str | None, value: Any) -> None:
        if self._run.definition.channels.get(getattr(definition, "name", "")) is not definition:
            self._declared_channel(definition)  # an equal declaration passes; others raise
        # Channel.physical_name is the name itself; a ChannelMap's names the instance.
        key = definition.name if type(definition) is Channel else definition.physical_name(instance)
        value_type = definition.value_type
        if (
            type(value) is value_type
            and value_type in self._codecs.identity_types
            and (value_type is not int or _INT64_MIN <= value <= _INT64_MAX)
        ):
            copy = value  # what roundtrip returns for an exact str, bool or int64
        else:
            copy = self._checked_copy(value_type, value, key)
        staged = self._staged
        if staged is None:
            staged = self._staged = Staged()
        staged.publishes.append((key, copy))

    def _checked_copy(self, value_type: Any, value: Any, key: str) -> Any:
        try:
            return self._codecs.roundtrip(value_type, value, operation="")
        except Exception:  # noqa: BLE001 - checked again below, with the message
            # The message is built only now: the same check again, naming Flow, Step, Channel.
            return self._codecs.roundtrip(
                value_type, value, operation=f"{self._where}: publish to Channel {key!r}"
            )

    def _channel_size(self, definition: Any, instance: str | None) -> int:
        self._declared_channel(definition)
        key = definition.physical_name(instance)
        own = sum(1 for k, _ in self.staged.publishes if k == key)
        return len(self._run.queues_view.get(key, ())) + own

    def _channel_results(self, definition: Any, instance: str | None) -> Sequence[Any]:
        self._declared_channel(definition)
        if self._execution is None or self._method != "execute":
            return ()
        key = definition.physical_name(instance)
        values = self._execution.consumed_values.get(key, ())
        value_type = definition.value_type
        if values and value_type in self._codecs.identity_types and set(map(type, values)) == {
            value_type
        }:
            # Every value is an exact str, bool or int: roundtrip returns each as it is
            # (ints within int64, checked at once).
            if value_type is not int or _INT64_MIN <= min(values) and max(values) <= _INT64_MAX:
                return list(values)
        return [self._codecs.roundtrip(value_type, v, operation=key) for v in values]

    def _channel_map_keys(self, definition: Any) -> tuple[str, ...]:
        self._declared_channel(definition)
        if self._rpc_name is None:
            raise RuntimeError(f"{self._where}: ChannelMap keys can only be listed in an RPC")
        prefix = definition.name + "/"
        keys = {k for k, q in self._run.queues_view.items() if k.startswith(prefix) and q}
        keys.update(k for k, _ in self.staged.publishes if k.startswith(prefix))
        return tuple(sorted(decoded_key(k[len(prefix) :]) for k in keys))

    def _pending_messages(
        self, definition: Any, instance: str | None
    ) -> Sequence[ChannelMessage[Any]]:
        self._declared_channel(definition)
        if not self._loaded(definition, instance):
            raise ChannelMessagesNotLoadedError(
                f"{self._where}: Channel {definition.name!r} was not selected for loading "
                "(add it to *_load_channels or @rpc(load_channels=...))"
            )
        key = definition.physical_name(instance)
        deleted = {m for k, m in self.staged.deletes if k == key}
        return [
            ChannelMessage(m.message_id, m.value)
            for m in self._run.queues_view.get(key, ())
            if m.message_id not in deleted
        ]

    def _loaded(self, definition: Any, instance: str | None) -> bool:
        """Whether this method (or RPC) selected the Channel's pending messages (R61, R113)."""
        if self._execution is not None:
            prefix = "wait_for_" if self._method == "wait_for" else "execute_"
            source: Any = self._execution.options
        elif self.rpc_options is not None:
            prefix, source = "", self.rpc_options
        else:
            return False
        if isinstance(definition, Channel):
            return definition in getattr(source, f"{prefix}load_channels", ())
        if definition in getattr(source, f"{prefix}load_channel_maps", ()):
            return True
        loads = getattr(source, f"{prefix}load_channel_map_instances", ())
        return any(ld.channel_map == definition and ld.instance == instance for ld in loads)

    def _delete_channel_message(
        self, definition: Any, instance: str | None, message_id: str
    ) -> None:
        self._declared_channel(definition)
        self.staged.delete(definition.physical_name(instance), message_id)

    # -- streams --------------------------------------------------------------------------
    def _write_stream(self, definition: Any, value: Any) -> StepOutput | None:
        """Write now from an async handler; a sync generator gets a StepOutput to yield (R180)."""
        writer = self.stream_writer
        if writer is None:
            raise RuntimeError(
                f"{self._where}: Streams can only be written from WaitFor or Execute"
            )
        if self._run.definition.streams.get(getattr(definition, "name", "")) != definition:
            raise FlowDefinitionError(
                f"{self._where}: Stream {getattr(definition, 'name', definition)!r} is not "
                "declared in the Flow's persistence schema"
            )
        copy = self._codecs.roundtrip(
            definition.value_type,
            value,
            operation=f"{self._where}: write Stream {definition.name!r}",
        )
        if self.is_async:
            writer(definition, copy)
            return None
        return stream_output(definition, copy)

    def write_stream_now(self, definition: Any, value: Any) -> None:
        """Append a yielded Stream write (called while a generator handler runs)."""
        writer = self.stream_writer
        if writer is not None:
            writer(definition, value)

    # -- subflows -------------------------------------------------------------------------
    def _subflow_result(self, index: int) -> FlowResult:
        if self._execution is None or self._method != "execute" or self._subflows is None:
            raise RuntimeError(f"{self._where}: SubFlow results can only be read in execute")
        return self._subflows.result(self._execution, index)  # type: ignore[no-any-return]

    def _subflow_flow_id(self, index: int) -> str:
        if self._execution is None or self._subflows is None:
            raise RuntimeError(f"{self._where}: SubFlow ids exist only inside a Step")
        return self._subflows.flow_id(self._execution, index)  # type: ignore[no-any-return]
