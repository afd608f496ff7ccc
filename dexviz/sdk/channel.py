"""Channel and ChannelMap: durable typed FIFO queues owned by one Flow execution."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote

from dexviz.sdk._condition_base import ChannelCondition, channel_condition_for

if TYPE_CHECKING:
    from dexviz.sdk.context import Context
    from dexviz.sdk.results import ChannelMessage

T = TypeVar("T")


def physical_name(name: str, instance: str | None) -> str:
    """Return the stored name of a definition instance: ``name`` or ``name/<quoted instance>``."""
    if instance is None:
        return name
    return f"{name}/{quote(instance, safe='')}"


def _check_name(kind: str, name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{kind} name must be a non-empty string, got {name!r}")
    if "/" in name:
        raise ValueError(f"{kind} name must not contain '/': {name!r}")


def _check_instance(kind: str, name: str, instance: object) -> None:
    # Dex takes any non-empty string as an instance key; spaces, '/' and the rest are
    # percent-encoded in the physical name (physical_name), never in the key itself.
    if not isinstance(instance, str) or not instance:
        raise ValueError(
            f"{kind} {name!r}: instance key must be a non-empty string, got {instance!r}"
        )


@dataclass(frozen=True)
class Channel(Generic[T]):
    """A durable FIFO queue inside one Flow execution; each message is consumed once."""

    name: str
    value_type: type[T]

    def __post_init__(self) -> None:
        _check_name("Channel", self.name)

    def physical_name(self, instance: str | None = None) -> str:
        """Return the queue name (a singleton Channel has no instance)."""
        return self.name

    def publish(self, context: Context, value: T) -> None:
        """Stage ``value`` for this Channel; it is appended when the method's result commits."""
        context._publish_channel(self, None, value)

    def size(self, context: Context) -> int:
        """Return how many messages are queued (reserved ones excluded, own publishes included)."""
        return context._channel_size(self, None)

    def results(self, context: Context) -> Sequence[T]:
        """In Execute: the values this execution's completed conditions consumed, FIFO."""
        return tuple(context._channel_results(self, None))

    def pending_messages(self, context: Context) -> Sequence[ChannelMessage[Any]]:
        """Return the queued messages (needs the Channel selected for loading)."""
        return tuple(context._pending_messages(self, None))

    def find_pending_message(self, context: Context, message_id: str) -> ChannelMessage[Any] | None:
        """Return the loaded pending message with ``message_id``, or None."""
        for message in context._pending_messages(self, None):
            if message.message_id == message_id:
                return message
        return None

    def delete(self, context: Context, message_id: str) -> None:
        """Stage the deletion of a pending message."""
        context._delete_channel_message(self, None, message_id)

    def for_one(self, *, condition_id: str | None = None) -> ChannelCondition:
        """Wait for one message and consume exactly one."""
        if condition_id is None:
            return channel_condition_for(self, 1)
        return self.for_n(1, condition_id=condition_id)

    def for_n(self, count: int, *, condition_id: str | None = None) -> ChannelCondition:
        """Wait for ``count`` messages and consume exactly ``count``."""
        if condition_id is None and type(count) is int and count >= 0:
            return channel_condition_for(self, count)
        return ChannelCondition(
            channel=self, at_least=count, at_most=count, condition_id=condition_id
        )

    def at_least(self, count: int, *, condition_id: str | None = None) -> ChannelCondition:
        """Wait for ``count`` messages and consume every available one."""
        return ChannelCondition(channel=self, at_least=count, condition_id=condition_id)

    def at_most(self, count: int, *, condition_id: str | None = None) -> ChannelCondition:
        """Never block; consume up to ``count`` queued messages when the Wait completes."""
        return ChannelCondition(channel=self, at_most=count, condition_id=condition_id)

    def for_range(
        self,
        *,
        at_least: int | None = None,
        at_most: int | None = None,
        condition_id: str | None = None,
    ) -> ChannelCondition:
        """Wait for ``at_least`` messages, then consume up to ``at_most``."""
        return ChannelCondition(
            channel=self, at_least=at_least, at_most=at_most, condition_id=condition_id
        )


@dataclass(frozen=True)
class ChannelMap(Generic[T]):
    """A family of independent Channel queues keyed by a runtime instance key."""

    name: str
    value_type: type[T]

    def __post_init__(self) -> None:
        _check_name("ChannelMap", self.name)

    def physical_name(self, instance: str | None = None) -> str:
        """Return ``name/<quoted instance>``, the queue of one instance."""
        if instance is None:
            raise ValueError(f"ChannelMap {self.name!r} needs an instance key")
        _check_instance("ChannelMap", self.name, instance)
        return physical_name(self.name, instance)

    def publish(self, context: Context, instance: str, value: T) -> None:
        """Stage ``value`` for the queue of ``instance``."""
        self.physical_name(instance)
        context._publish_channel(self, instance, value)

    def size(self, context: Context, instance: str) -> int:
        """Return how many messages the queue of ``instance`` holds."""
        return context._channel_size(self, instance)

    def results(self, context: Context, instance: str) -> Sequence[T]:
        """In Execute: the values consumed from ``instance`` by completed conditions."""
        return tuple(context._channel_results(self, instance))

    def pending_messages(self, context: Context, instance: str) -> Sequence[ChannelMessage[Any]]:
        """Return the queued messages of ``instance`` (needs it selected for loading)."""
        return tuple(context._pending_messages(self, instance))

    def find_pending_message(
        self, context: Context, instance: str, message_id: str
    ) -> ChannelMessage[Any] | None:
        """Return the loaded pending message of ``instance`` with ``message_id``, or None."""
        for message in context._pending_messages(self, instance):
            if message.message_id == message_id:
                return message
        return None

    def delete(self, context: Context, instance: str, message_id: str) -> None:
        """Stage the deletion of a pending message of ``instance``."""
        context._delete_channel_message(self, instance, message_id)

    def get_all_instance_keys(self, context: Context) -> tuple[str, ...]:
        """Return the non-empty instance keys, sorted (RPCs only)."""
        return context._channel_map_keys(self)

    def get_map_size(self, context: Context) -> int:
        """Return how many instances hold messages (RPCs only)."""
        return len(context._channel_map_keys(self))

    def load_messages(self, instance: str) -> ChannelMapLoad:
        """Select the pending messages of ``instance`` for loading."""
        return ChannelMapLoad(self, instance)

    def _condition(
        self, instance: str, at_least: int | None, at_most: int | None, cid: str | None
    ) -> ChannelCondition:
        self.physical_name(instance)
        return ChannelCondition(
            channel=self, instance=instance, at_least=at_least, at_most=at_most, condition_id=cid
        )

    def for_one(self, instance: str, *, condition_id: str | None = None) -> ChannelCondition:
        """Wait for one message of ``instance`` and consume it."""
        return self._condition(instance, 1, 1, condition_id)

    def for_n(
        self, instance: str, count: int, *, condition_id: str | None = None
    ) -> ChannelCondition:
        """Wait for ``count`` messages of ``instance`` and consume exactly ``count``."""
        return self._condition(instance, count, count, condition_id)

    def at_least(
        self, instance: str, count: int, *, condition_id: str | None = None
    ) -> ChannelCondition:
        """Wait for ``count`` messages of ``instance`` and consume all available."""
        return self._condition(instance, count, None, condition_id)

    def at_most(
        self, instance: str, count: int, *, condition_id: str | None = None
    ) -> ChannelCondition:
        """Never block; consume up to ``count`` messages of ``instance``."""
        return self._condition(instance, None, count, condition_id)

    def for_range(
        self,
        instance: str,
        *,
        at_least: int | None = None,
        at_most: int | None = None,
        condition_id: str | None = None,
    ) -> ChannelCondition:
        """Wait for ``at_least`` messages of ``instance``, then consume up to ``at_most``."""
        return self._condition(instance, at_least, at_most, condition_id)


@dataclass(frozen=True)
class ChannelMapLoad:
    """Selects one ChannelMap instance's pending messages for loading."""

    channel_map: ChannelMap[Any]
    instance: str

    @property
    def physical_name(self) -> str:
        """The selected queue's stored name."""
        return self.channel_map.physical_name(self.instance)
