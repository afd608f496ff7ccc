"""Flow definitions: Flow, StepList, PersistenceSchema, the ``@rpc`` decorator and RPCResult."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from dexviz.sdk.attribute import Attribute, AttributeLock, AttributeMap, AttributeMapLoad
from dexviz.sdk.channel import Channel, ChannelMap, ChannelMapLoad
from dexviz.sdk.decision import StepMovement
from dexviz.sdk.stream import Stream

if TYPE_CHECKING:
    from dexviz.sdk.context import Context
    from dexviz.sdk.decision import StepDecision
    from dexviz.sdk.step import Step

StartT = TypeVar("StartT")
O = TypeVar("O")  # noqa: E741
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class StepDefinition:
    """One entry of a StepList, as Dex's SDK iterates it: the Step and whether it starts the Flow.

    Attributes:
        step: The Step instance.
        is_start_step: True for the Step that receives ``start_flow``'s input.
    """

    step: Step[Any]
    is_start_step: bool


class _StartStep:
    """``StepList.start_step(s)`` builds a list; ``some_list.start_step(s)`` adds a start to it."""

    def __get__(self, obj: StepList[Any] | None, owner: type) -> Callable[[Any], StepList[Any]]:
        if obj is None:
            return lambda step: StepList(start=(step,))
        return lambda step: replace(obj, start=obj.start + (step,))


@dataclass(frozen=True)
class StepList(Generic[StartT]):
    """A Flow's Steps as instances: at most one start Step plus every Step it can reach."""

    start: tuple[Step[Any], ...] = ()
    others: tuple[Step[Any], ...] = ()

    start_step = _StartStep()
    """Mark the starting Step (``StepList.start_step(first)``)."""

    @classmethod
    def empty(cls) -> StepList[Any]:
        """A Flow without Steps, driven only by RPCs."""
        return cls()

    @classmethod
    def without_start_step(cls, *steps: Step[Any]) -> StepList[None]:
        """Steps reachable only from RPCs or decisions; the start input must be None."""
        return StepList[None](others=tuple(steps))

    def other_steps(self, *steps: Step[Any]) -> StepList[StartT]:
        """Return a new list with ``steps`` appended as non-start Steps."""
        return replace(self, others=self.others + tuple(steps))

    @property
    def all_steps(self) -> tuple[Step[Any], ...]:
        """The start Step(s) first, then the others, in declaration order."""
        return self.start + self.others

    def __iter__(self) -> Iterator[StepDefinition]:
        """Yield each Step's definition (``.step``, ``.is_start_step``) in registration order."""
        for step in self.start:
            yield StepDefinition(step, True)
        for step in self.others:
            yield StepDefinition(step, False)


@dataclass(frozen=True)
class PersistenceSchema:
    """The Attributes, Channels and Streams a Flow declares; every one it uses must be listed."""

    attributes: tuple[Attribute[Any] | AttributeMap[Any], ...] = ()
    channels: tuple[Channel[Any] | ChannelMap[Any], ...] = ()
    streams: tuple[Any, ...] = ()

    @classmethod
    def of(cls, *definitions: object) -> PersistenceSchema:
        """Sort Attribute, AttributeMap, Channel and ChannelMap definitions into a schema."""
        attributes: list[Attribute[Any] | AttributeMap[Any]] = []
        channels: list[Channel[Any] | ChannelMap[Any]] = []
        streams: list[Stream[Any]] = []
        for definition in definitions:
            if isinstance(definition, (Attribute, AttributeMap)):
                attributes.append(definition)
            elif isinstance(definition, (Channel, ChannelMap)):
                channels.append(definition)
            elif isinstance(definition, Stream):
                streams.append(definition)
            else:
                raise TypeError(
                    "PersistenceSchema.of takes Attribute, AttributeMap, Channel, ChannelMap or "
                    f"Stream definitions, got {type(definition).__name__}"
                )
        return cls(tuple(attributes), tuple(channels), tuple(streams))


class Flow(Generic[StartT]):
    """Subclass it: list Steps, declare persistence, add ``@rpc`` methods and handle_timeout."""

    def get_flow_type(self) -> str:
        """Return the Flow type; defaults to the class name."""
        return type(self).__name__

    def get_steps(self) -> StepList[StartT]:
        """Return the Step list; the default is empty (an RPC-driven Flow)."""
        return StepList()

    def get_persistence_schema(self) -> PersistenceSchema:
        """Return the Attributes and Channels this Flow uses; the default declares none."""
        return PersistenceSchema()

    def handle_timeout(self, context: Context) -> StepDecision:
        """Decide what happens when the Flow's timeout fires under the HANDLER policy."""
        raise NotImplementedError(f"{self.get_flow_type()} has no handle_timeout")

    def __repr__(self) -> str:
        return f"<Flow {self.get_flow_type()}>"


def has_timeout_handler(flow: Flow[Any]) -> bool:
    """Whether the Flow overrides ``handle_timeout``."""
    return type(flow).handle_timeout is not Flow.handle_timeout


@dataclass(frozen=True)
class RpcOptions:
    """What ``@rpc`` records on a Flow method."""

    name: str
    timeout: timedelta | None = None
    lock_attributes: tuple[AttributeLock, ...] = ()
    is_transactional: bool = False
    load_attribute_maps: tuple[AttributeMap[Any], ...] = ()
    load_attribute_map_instances: tuple[AttributeMapLoad, ...] = ()
    load_channels: tuple[Channel[Any], ...] = ()
    load_channel_maps: tuple[ChannelMap[Any], ...] = ()
    load_channel_map_instances: tuple[ChannelMapLoad, ...] = ()

    def __post_init__(self) -> None:
        if self.timeout is not None and self.timeout < timedelta(0):
            raise ValueError(f"@rpc {self.name!r}: timeout must be >= 0, got {self.timeout}")


RPC_MARK = "__dex_rpc__"


@overload
def rpc(func: F) -> F: ...


@overload
def rpc(
    func: None = None,
    *,
    name: str | None = None,
    timeout: timedelta | None = None,
    lock_attributes: Sequence[AttributeLock] = (),
    is_transactional: bool = False,
    load_attribute_maps: Sequence[AttributeMap[Any]] = (),
    load_attribute_map_instances: Sequence[AttributeMapLoad] = (),
    load_channels: Sequence[Channel[Any]] = (),
    load_channel_maps: Sequence[ChannelMap[Any]] = (),
    load_channel_map_instances: Sequence[ChannelMapLoad] = (),
) -> Callable[[F], F]: ...


def rpc(func: Any = None, *, name: str | None = None, **settings: Any) -> Any:
    """Mark a Flow method as an RPC (bare ``@rpc`` or ``@rpc(name=..., timeout=..., ...)``)."""

    def mark(method: F) -> F:
        values: dict[str, Any] = {
            key: tuple(v) if isinstance(v, (list, tuple)) else v for key, v in settings.items()
        }
        setattr(method, RPC_MARK, RpcOptions(name or method.__name__, **values))
        return method

    return mark(func) if func is not None else mark


@dataclass(frozen=True)
class RPCResult(Generic[O]):
    """An RPC's output, plus Steps to start and Step types to cancel, applied atomically."""

    output: O
    next_steps: tuple[StepMovement, ...] = field(default=())
    canceling_steps: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.next_steps, tuple):
            object.__setattr__(self, "next_steps", tuple(self.next_steps))
        for movement in self.next_steps:
            if not isinstance(movement, StepMovement):
                raise TypeError(
                    f"RPCResult.next_steps takes StepMovement values, got {type(movement).__name__}"
                )

    def with_canceling_steps(self, *steps: Any) -> RPCResult[O]:
        """Also cancel every active execution of these Step types after the RPC commits."""
        return replace(self, canceling_steps=self.canceling_steps + tuple(steps))
