"""Flow-level options (Dex §2.12, §2.9): start, SubFlow and the timeout policy.

``resolve_timeout_policy`` is R136: which timeout policy a start actually uses. The module also
re-exports the options of ``client_options`` and ``flow_config``, as Dex's ``flow_options`` users
expect to find start, stop and time-travel options together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

from dexviz.sdk.client_options import (
    ClientOptions,
    RPCInvokeOptions,
    StopFlowOptions,
    StopType,
    TimeTravelOptions,
    TimeTravelStepMethod,
    TimeTravelType,
    WaitForAttributeOptions,
    WaitForStepCompletionOptions,
    WorkerOptions,
    WorkerTarget,
)
from dexviz.sdk.flow_config import ActiveStepSearchMode, FlowConfig
from dexviz.sdk.options import (
    RetryPolicy,
    StepDurability,
    StepOptions,
    as_step_class,
    as_tuple,
    require_enum,
    require_whole_seconds,
)

if TYPE_CHECKING:
    from dexviz.sdk.attribute import AttributeLock, AttributeMap, AttributeMapLoad
    from dexviz.sdk.channel import Channel, ChannelMap, ChannelMapLoad

__all__ = [
    "ActiveStepSearchMode",
    "ClientOptions",
    "FlowConfig",
    "FlowTimeoutHandlerOptions",
    "FlowTimeoutPolicy",
    "IdReusePolicy",
    "InitialAttribute",
    "RPCInvokeOptions",
    "StartFlowOptions",
    "StopFlowOptions",
    "StopType",
    "SubFlowOptions",
    "SubFlowReusePolicy",
    "TimeTravelOptions",
    "TimeTravelStepMethod",
    "TimeTravelType",
    "WaitForAttributeOptions",
    "WaitForStepCompletionOptions",
    "WorkerOptions",
    "WorkerTarget",
    "resolve_timeout_policy",
]


class IdReusePolicy(Enum):
    """Whether ``start_flow`` may reuse a Flow ID that already has runs (R140).

    Attributes:
        DEFAULT: The server's own policy, allow-if-not-running: an active run rejects the
            start, a closed one lets a new run start (R140 as corrected; a doc revision that
            says "reject any used ID" contradicts the server's code).
        ALLOW_IF_PREVIOUS_FAILED: Start only if the previous run did not complete.
        ALLOW_IF_NOT_RUNNING: Start if no run is active.
        ALLOW_TERMINATE_IF_RUNNING: Terminate an active run, then start.
        DISALLOW: Always reject a used Flow ID.
    """

    DEFAULT = "default"
    ALLOW_IF_PREVIOUS_FAILED = "allow_if_previous_failed"
    ALLOW_IF_NOT_RUNNING = "allow_if_not_running"
    ALLOW_TERMINATE_IF_RUNNING = "allow_terminate_if_running"
    DISALLOW = "disallow"


class FlowTimeoutPolicy(Enum):
    """What happens when a Flow's timeout fires (R136-R138).

    Attributes:
        DEFAULT: HANDLER if the Flow overrides ``handle_timeout``, else FAIL.
        FAIL: Fail with FLOW_TIMEOUT (a Flow retry policy may retry it).
        CANCEL: Cancel, never retried.
        HANDLER: Run ``Flow.handle_timeout`` once, as one retryable execution.
    """

    DEFAULT = "default"
    FAIL = "fail"
    CANCEL = "cancel"
    HANDLER = "handler"


def resolve_timeout_policy(
    timeout: timedelta | None,
    policy: FlowTimeoutPolicy,
    has_handler: bool,
    *,
    flow_type: str = "",
) -> FlowTimeoutPolicy:
    """Return the timeout policy a start uses (R136).

    Args:
        timeout: The Flow timeout; None or zero means no timeout.
        policy: The requested policy.
        has_handler: Whether the Flow overrides ``handle_timeout``.
        flow_type: The Flow type, named in error messages.

    Returns:
        DEFAULT when there is no timeout; otherwise FAIL, CANCEL or HANDLER.

    Raises:
        ValueError: For a policy other than DEFAULT without a positive timeout, or HANDLER for a
            Flow without ``handle_timeout``.
    """
    flow = f"Flow {flow_type!r}" if flow_type else "the Flow"
    if timeout is None or timeout <= timedelta(0):
        if policy is not FlowTimeoutPolicy.DEFAULT:
            raise ValueError(
                f"Flow timeout policy requires a positive timeout (timeout_policy {policy.name}, "
                f"{flow})"
            )
        return FlowTimeoutPolicy.DEFAULT
    if policy is FlowTimeoutPolicy.DEFAULT:
        return FlowTimeoutPolicy.HANDLER if has_handler else FlowTimeoutPolicy.FAIL
    if policy is FlowTimeoutPolicy.HANDLER and not has_handler:
        # Dex's wording, which users match on.
        name = flow_type or "(unnamed)"
        raise ValueError(f"Flow {name} has no handle_timeout override")
    return policy


class InitialAttribute(NamedTuple):
    """One Attribute write made atomically with a start: ``(attribute, instance, value)``.

    Attributes:
        attribute: The Attribute or AttributeMap definition.
        instance: The AttributeMap instance, or None for a singleton Attribute.
        value: The value to write.
    """

    attribute: Any
    instance: str | None
    value: Any


def _initial_attribute(owner: str, attribute: object, args: tuple[object, ...]) -> InitialAttribute:
    if not isinstance(getattr(attribute, "name", None), str):
        raise TypeError(
            f"{owner}.with_attribute needs an Attribute or AttributeMap, got {attribute!r}"
        )
    is_map = callable(getattr(attribute, "get_all_instance_keys", None))
    if not is_map and len(args) == 1:
        return InitialAttribute(attribute, None, args[0])
    if is_map and len(args) == 2:
        instance = args[0]
        if not isinstance(instance, str) or not instance:  # '/' is escaped, as in AttributeMap
            raise ValueError(
                f"{owner}.with_attribute: an AttributeMap instance must be a non-empty str, "
                f"got {instance!r}"
            )
        return InitialAttribute(attribute, instance, args[1])
    form = "(attribute_map, instance, value)" if is_map else "(attribute, value)"
    raise TypeError(f"{owner}.with_attribute takes {form}, got {len(args) + 1} arguments")


def _check_timeout(owner: str, options: StartFlowOptions | SubFlowOptions) -> None:
    require_whole_seconds(owner, "timeout", options.timeout)
    require_whole_seconds(owner, "start_delay", options.start_delay)
    require_enum(owner, "timeout_policy", options.timeout_policy, FlowTimeoutPolicy)
    positive = options.timeout is not None and options.timeout > timedelta(0)
    if not positive and options.timeout_policy is not FlowTimeoutPolicy.DEFAULT:
        raise ValueError(
            "Flow timeout policy requires a positive timeout "
            f"({owner}.timeout_policy {options.timeout_policy.name})"
        )
    if options.timeout_handler_options is not None:
        if not positive or options.timeout_policy in (
            FlowTimeoutPolicy.FAIL,
            FlowTimeoutPolicy.CANCEL,
        ):
            raise ValueError(
                f"{owner}.timeout_handler_options needs a positive timeout and the HANDLER policy"
            )
    if options.retry_policy is not None and not isinstance(options.retry_policy, RetryPolicy):
        raise TypeError(f"{owner}.retry_policy must be a RetryPolicy, got {options.retry_policy!r}")
    writes = tuple(InitialAttribute(*write) for write in options.initial_attributes)
    object.__setattr__(options, "initial_attributes", writes)


@dataclass(frozen=True, slots=True)
class FlowTimeoutHandlerOptions:
    """How ``Flow.handle_timeout`` runs under the HANDLER policy (R138).

    Attributes:
        method_timeout: Limit of one handler attempt.
        heartbeat_timeout: Progress deadline of one attempt.
        retry: The handler's retry policy.
        durability: Durability of the handler's result.
        lock_attributes: Attribute locks held while it runs.
        load_attribute_maps: AttributeMaps loaded whole.
        load_attribute_map_instances: AttributeMap instances loaded.
        load_channels: Channels whose pending messages it may read.
        load_channel_maps: ChannelMaps whose pending messages it may read.
        load_channel_map_instances: ChannelMap instances it may read.
        failure_proceed_to: The no-input Step the Flow moves to when the handler is exhausted.
        failure_options: Options for that movement.
    """

    method_timeout: timedelta | None = None
    heartbeat_timeout: timedelta | None = None
    retry: RetryPolicy | None = None
    durability: StepDurability = StepDurability.DEFAULT
    lock_attributes: tuple[AttributeLock, ...] = ()
    load_attribute_maps: tuple[AttributeMap[Any], ...] = ()
    load_attribute_map_instances: tuple[AttributeMapLoad, ...] = ()
    load_channels: tuple[Channel[Any], ...] = ()
    load_channel_maps: tuple[ChannelMap[Any], ...] = ()
    load_channel_map_instances: tuple[ChannelMapLoad, ...] = ()
    failure_proceed_to: type | None = None
    failure_options: StepOptions | None = None

    def __post_init__(self) -> None:
        """Validate the fields and store sequences as tuples."""
        owner = "FlowTimeoutHandlerOptions"
        require_whole_seconds(owner, "method_timeout", self.method_timeout)
        require_whole_seconds(owner, "heartbeat_timeout", self.heartbeat_timeout)
        require_enum(owner, "durability", self.durability, StepDurability)
        if self.retry is not None and not isinstance(self.retry, RetryPolicy):
            raise TypeError(f"{owner}.retry must be a RetryPolicy, got {self.retry!r}")
        for item in fields(self):
            if item.name.startswith(("lock_", "load_")):
                object.__setattr__(
                    self, item.name, as_tuple(owner, item.name, getattr(self, item.name))
                )
        if self.failure_proceed_to is not None:
            object.__setattr__(self, "failure_proceed_to", as_step_class(self.failure_proceed_to))
        elif self.failure_options is not None:
            raise ValueError(f"{owner}.failure_options needs failure_proceed_to")

    def on_failure_proceed_to(
        self, step: type | object, options: StepOptions | None = None
    ) -> FlowTimeoutHandlerOptions:
        """Return a copy that moves the Flow to a no-input Step when the handler is exhausted.

        Args:
            step: The recovery Step class (its input is None); an instance is accepted too.
            options: Options for that movement.
        """
        return replace(self, failure_proceed_to=as_step_class(step), failure_options=options)


@dataclass(frozen=True, slots=True)
class StartFlowOptions:
    """Options of ``start_flow``; durations are whole seconds.

    Attributes:
        timeout: The Flow timeout (None or zero: none).
        timeout_policy: What happens when it fires.
        timeout_handler_options: How ``handle_timeout`` runs (HANDLER policy only).
        start_delay: Delay before the start Step runs.
        id_reuse_policy: Whether a used Flow ID may start again.
        retry_policy: Retries of the whole Flow.
        initial_attributes: Attribute writes made with the start (see :meth:`with_attribute`).
        config_override: FlowConfig fields overriding the defaults.
        ignore_already_started: With a matching ``request_id``, return the existing run.
        request_id: Idempotency key of the start (non-empty when set).
    """

    timeout: timedelta | None = None
    timeout_policy: FlowTimeoutPolicy = FlowTimeoutPolicy.DEFAULT
    timeout_handler_options: FlowTimeoutHandlerOptions | None = None
    start_delay: timedelta | None = None
    id_reuse_policy: IdReusePolicy = IdReusePolicy.DEFAULT
    retry_policy: RetryPolicy | None = None
    initial_attributes: tuple[InitialAttribute, ...] = ()
    config_override: FlowConfig | None = None
    ignore_already_started: bool = False
    request_id: str | None = None

    def __post_init__(self) -> None:
        """Validate the fields."""
        _check_timeout("StartFlowOptions", self)
        require_enum("StartFlowOptions", "id_reuse_policy", self.id_reuse_policy, IdReusePolicy)
        if self.request_id is not None and (
            not isinstance(self.request_id, str) or not self.request_id
        ):
            raise ValueError(
                f"StartFlowOptions.request_id must be a non-empty str, got {self.request_id!r}"
            )

    def with_attribute(self, attribute: Any, /, *args: Any) -> StartFlowOptions:
        """Return a copy that also writes an Attribute with the start.

        Call it as ``with_attribute(attribute, value)`` or
        ``with_attribute(attribute_map, instance, value)``; writes keep their call order.

        Raises:
            TypeError: If the arguments match neither form.
            ValueError: If the instance is empty or contains ``/``.
        """
        added = _initial_attribute("StartFlowOptions", attribute, args)
        return replace(self, initial_attributes=(*self.initial_attributes, added))


class SubFlowReusePolicy(Enum):
    """What ``SubFlow.run`` does when the generated child ID already has a run (R134).

    Attributes:
        ATTACH: Attach to a running child, or return its result whatever it was.
        RESTART_IF_PREVIOUS_EXITS_ABNORMALLY: Attach or return a completed result; restart
            after an abnormal exit.
        ALWAYS_RESTART: Start a new child every time.
    """

    ATTACH = "attach"
    RESTART_IF_PREVIOUS_EXITS_ABNORMALLY = "restart_if_previous_exits_abnormally"
    ALWAYS_RESTART = "always_restart"


@dataclass(frozen=True, slots=True)
class SubFlowOptions:
    """Options of one ``SubFlow.run`` condition; they mirror StartFlowOptions (R135).

    Attributes:
        timeout: The child's timeout.
        timeout_policy: What happens when it fires.
        timeout_handler_options: How the child's ``handle_timeout`` runs.
        start_delay: Delay before the child's start Step runs.
        retry_policy: Retries of the whole child Flow.
        initial_attributes: Attribute writes of the child, made with its start.
        config_override: FlowConfig fields over the config inherited from the parent.
        reuse_policy: What to do when the child ID already has a run.
        condition_id: The condition's ID (needed by ``Wait.any_combination_of``).
    """

    timeout: timedelta | None = None
    timeout_policy: FlowTimeoutPolicy = FlowTimeoutPolicy.DEFAULT
    timeout_handler_options: FlowTimeoutHandlerOptions | None = None
    start_delay: timedelta | None = None
    retry_policy: RetryPolicy | None = None
    initial_attributes: tuple[InitialAttribute, ...] = ()
    config_override: FlowConfig | None = None
    reuse_policy: SubFlowReusePolicy = SubFlowReusePolicy.RESTART_IF_PREVIOUS_EXITS_ABNORMALLY
    condition_id: str | None = None

    def __post_init__(self) -> None:
        """Validate the fields."""
        _check_timeout("SubFlowOptions", self)
        require_enum("SubFlowOptions", "reuse_policy", self.reuse_policy, SubFlowReusePolicy)
        if self.condition_id is not None and (
            not isinstance(self.condition_id, str) or not self.condition_id
        ):
            raise ValueError(
                f"SubFlowOptions.condition_id must be a non-empty str, got {self.condition_id!r}"
            )

    def with_attribute(self, attribute: Any, /, *args: Any) -> SubFlowOptions:
        """Return a copy that also writes one of the child's Attributes with its start.

        Call it as ``with_attribute(attribute, value)`` or
        ``with_attribute(attribute_map, instance, value)``.

        Raises:
            TypeError: If the arguments match neither form.
            ValueError: If the instance is empty or contains ``/``.
        """
        added = _initial_attribute("SubFlowOptions", attribute, args)
        return replace(self, initial_attributes=(*self.initial_attributes, added))
