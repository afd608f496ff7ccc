"""The checked, engine-ready description of a registered Flow: its Steps, RPCs and resources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dexviz.sdk.attribute import Attribute, AttributeMap
from dexviz.sdk.channel import Channel, ChannelMap
from dexviz.sdk.decision import step_target_name
from dexviz.sdk.errors import FlowDefinitionError
from dexviz.sdk.flow import Flow, RpcOptions
from dexviz.sdk.options import StepOptions
from dexviz.sdk.step import Step


@dataclass(frozen=True)
class StepDefinition:
    """One registered Step: its type, instance, input type, handler kinds and options."""

    step_type: str
    step: Step[Any]
    input_type: Any
    has_wait_for: bool
    wait_for_is_async: bool
    execute_is_async: bool
    options: StepOptions | None

    @property
    def step_class(self) -> type:
        """The Step's class."""
        return type(self.step)


@dataclass(frozen=True)
class RpcDefinition:
    """One ``@rpc`` method of a registered Flow."""

    name: str
    method_name: str
    options: RpcOptions
    has_input: bool
    input_type: Any
    is_async: bool

    @property
    def is_transactional(self) -> bool:
        """Locking RPCs are transactional too (R120)."""
        return self.options.is_transactional or bool(self.options.lock_attributes)


@dataclass
class FlowDefinition:
    """Everything the engine needs to run one Flow type, resolved once at registration."""

    flow: Flow[Any]
    flow_type: str
    start: StepDefinition | None
    steps: dict[str, StepDefinition]
    channels: dict[str, Channel[Any] | ChannelMap[Any]]
    attributes: dict[str, Attribute[Any] | AttributeMap[Any]]
    rpcs: dict[str, RpcDefinition]
    has_timeout_handler: bool
    timeout_handler_is_async: bool
    by_class: dict[type, list[StepDefinition]] = field(default_factory=dict)
    by_instance: dict[int, StepDefinition] = field(default_factory=dict)
    rpc_by_function: dict[Callable[..., Any], RpcDefinition] = field(default_factory=dict)
    streams: dict[str, Any] = field(default_factory=dict)

    def resolve_step(self, target: Any) -> StepDefinition:
        """Find the registered Step for a go_to target: a Step class, instance or type name."""
        if isinstance(target, str):
            found = self.steps.get(target)
            if found is not None:
                return found
        elif isinstance(target, type):
            candidates = self.by_class.get(target, [])
            if len(candidates) == 1:
                return candidates[0]
            if len(candidates) > 1:
                types = ", ".join(c.step_type for c in candidates)
                raise FlowDefinitionError(
                    f"Flow {self.flow_type!r}: class {target.__name__} is registered as several "
                    f"Steps ({types}); pass the Step instance instead of the class"
                )
        else:
            found = self.by_instance.get(id(target))
            if found is not None and found.step is target:
                return found
            if isinstance(target, Step):
                return self.resolve_step(type(target))
        raise FlowDefinitionError(
            f"Flow {self.flow_type!r}: Step {step_target_name(target)!r} is not registered; "
            f"add it with StepList.other_steps(...) (registered: {', '.join(sorted(self.steps))})"
        )

    def channel(self, name: str) -> Channel[Any] | ChannelMap[Any] | None:
        """The declared Channel or ChannelMap named ``name``."""
        return self.channels.get(name)
