"""Step options (Dex §2.4): RetryPolicy with its backoff rules, StepOptions, durability.

``RetryPolicy.backoff`` and ``RetryPolicy.should_retry`` are the pure rules the engine applies
between attempts (R103, R104); ``resolve_durability`` is R111.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from dexviz.sdk.attribute import AttributeLock, AttributeMap, AttributeMapLoad
    from dexviz.sdk.channel import Channel, ChannelMap, ChannelMapLoad

_INT32_MAX = 2**31 - 1

DEFAULT_INITIAL_INTERVAL = timedelta(seconds=1)
"""Delay before the first retry when a policy leaves ``initial_interval`` unset (R103)."""
DEFAULT_BACKOFF_COEFFICIENT = 2.0
"""Interval multiplier when a policy leaves ``backoff_coefficient`` at 0 (R103)."""
DEFAULT_MAXIMUM_INTERVAL = timedelta(seconds=100)
"""Largest retry delay when a policy leaves ``maximum_interval`` unset (R103)."""
DEFAULT_TOTAL_DURATION = timedelta(hours=4)
"""Overall retry budget when a policy leaves ``total_duration`` unset (Dex 1.23 default, R104)."""


def require_whole_seconds(owner: str, name: str, value: object, *, optional: bool = True) -> None:
    """Check that a duration option is a non-negative whole number of seconds within int32.

    Dex sends durations as int32 seconds, so anything else fails on a real server.

    Args:
        owner: The options class, for the message.
        name: The field name, for the message.
        value: The value to check.
        optional: Whether None is allowed.

    Raises:
        TypeError: If the value is not a timedelta (or None when allowed).
        ValueError: If it is negative, fractional, or too large.
    """
    if value is None and optional:
        return
    if not isinstance(value, timedelta):
        raise TypeError(f"{owner}.{name} must be a timedelta, got {type(value).__name__}")
    seconds = value.total_seconds()
    if seconds < 0 or not seconds.is_integer() or seconds > _INT32_MAX:
        raise ValueError(
            f"{owner}.{name} must be whole seconds between 0 and {_INT32_MAX}, got {value!r}"
        )


def as_tuple(owner: str, name: str, value: object) -> tuple[Any, ...]:
    """Return a sequence option as a tuple (lists are accepted); reject strings and scalars.

    Raises:
        TypeError: If the value is a string or not iterable.
    """
    if isinstance(value, tuple):
        return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{owner}.{name} must be a tuple, got {type(value).__name__}")
    return tuple(value)


def as_step_class(step: object) -> type:
    """Return the Step class for a Step class or a Step instance (the 0.2 SDK used instances).

    Raises:
        TypeError: If ``step`` is neither a class nor an object with an ``execute`` method.
    """
    cls = step if isinstance(step, type) else type(step)
    if not callable(getattr(cls, "execute", None)):
        raise TypeError(f"expected a Step class or instance, got {step!r}")
    return cls


def require_enum(owner: str, name: str, value: object, enum: type[Enum]) -> None:
    """Raise TypeError unless ``value`` is a member of ``enum`` (the message lists the members)."""
    if not isinstance(value, enum):
        allowed = ", ".join(member.name for member in enum)
        raise TypeError(
            f"{owner}.{name} must be a member of {enum.__name__} ({allowed}), got {value!r}"
        )


class StepDurability(Enum):
    """How a Step method's result is persisted (a throughput knob; no effect in-process).

    Attributes:
        DEFAULT: Use the FlowConfig's durability, else SYNC (R111).
        SYNC: Persist before continuing.
        ASYNC: Persist asynchronously; a crash may replay the method.
    """

    DEFAULT = "default"
    SYNC = "sync"
    ASYNC = "async"


class WaitForFailurePolicy(Enum):
    """What happens when ``wait_for`` has used up its retries (R108).

    Attributes:
        FAIL_FLOW: Fail the Flow with WORKER_API_FAILED.
        PROCEED: Run ``execute`` anyway; ``context.wait_for_method_failed()`` returns True.
    """

    FAIL_FLOW = "fail_flow"
    PROCEED = "proceed"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential retries of one method of one execution (R102-R104).

    Zero or None fields take the defaults: initial interval 1 s, coefficient 2.0, maximum
    interval 100 s, no attempt limit, total duration 4 h. Attempts count the first call.
    Durations must be whole seconds.

    Attributes:
        initial_interval: Delay before the first retry.
        backoff_coefficient: Multiplier between consecutive delays (0, or at least 1).
        maximum_interval: Largest single delay.
        maximum_attempts: Attempt limit including the first attempt; 0 means unlimited.
        total_duration: Deadline for all attempts and delays, from the method's start (before
            any wait for its Attribute locks). An attempt still running when it passes fails as
            a timeout; one that would start after it (it waited for its locks that long, or the
            engine was down) fails at once as a timeout, without its handler being called.

    Examples:
        >>> RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3).backoff(2)
        datetime.timedelta(seconds=2)
    """

    initial_interval: timedelta | None = None
    backoff_coefficient: float = 0.0
    maximum_interval: timedelta | None = None
    maximum_attempts: int = 0
    total_duration: timedelta | None = None

    def __post_init__(self) -> None:
        """Validate the fields."""
        for name in ("initial_interval", "maximum_interval", "total_duration"):
            require_whole_seconds("RetryPolicy", name, getattr(self, name))
        coefficient = self.backoff_coefficient
        if isinstance(coefficient, bool) or not isinstance(coefficient, (int, float)):
            raise TypeError(f"RetryPolicy.backoff_coefficient must be a float, got {coefficient!r}")
        if not math.isfinite(coefficient) or coefficient < 0 or 0 < coefficient < 1:
            raise ValueError(
                f"RetryPolicy.backoff_coefficient must be 0 (default 2.0) or at least 1, "
                f"got {coefficient!r}"
            )
        attempts = self.maximum_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
            raise ValueError(
                f"RetryPolicy.maximum_attempts must be an int >= 0 (0: unlimited), got {attempts!r}"
            )
        if self.initial_interval and self.maximum_interval:
            if self.maximum_interval < self.initial_interval:
                raise ValueError(
                    f"RetryPolicy.maximum_interval ({self.maximum_interval}) must not be less "
                    f"than initial_interval ({self.initial_interval})"
                )

    @property
    def effective_initial_interval(self) -> timedelta:
        """The initial interval, with the default applied."""
        return self.initial_interval or DEFAULT_INITIAL_INTERVAL

    @property
    def effective_backoff_coefficient(self) -> float:
        """The backoff coefficient, with the default applied."""
        return float(self.backoff_coefficient) or DEFAULT_BACKOFF_COEFFICIENT

    @property
    def effective_maximum_interval(self) -> timedelta:
        """The maximum interval; when unset, 100 s but never less than the initial interval."""
        if self.maximum_interval:
            return self.maximum_interval
        return max(DEFAULT_MAXIMUM_INTERVAL, self.effective_initial_interval)

    @property
    def effective_total_duration(self) -> timedelta:
        """The total retry budget, with the default (4 h) applied."""
        return self.total_duration or DEFAULT_TOTAL_DURATION

    def backoff(self, failed_attempts: int) -> timedelta:
        """Return the delay before the next attempt after ``failed_attempts`` failures (R103).

        ``min(initial × coefficient^(k−1), maximum)`` with k = ``failed_attempts``.

        Raises:
            ValueError: If ``failed_attempts`` is less than 1.
        """
        if failed_attempts < 1:
            raise ValueError(f"backoff() needs at least one failed attempt, got {failed_attempts}")
        maximum = self.effective_maximum_interval.total_seconds()
        initial = self.effective_initial_interval.total_seconds()
        try:
            delay = initial * self.effective_backoff_coefficient ** (failed_attempts - 1)
        except OverflowError:
            delay = math.inf
        return timedelta(seconds=min(delay, maximum))

    def should_retry(self, attempt: int, elapsed: timedelta, next_delay: timedelta) -> bool:
        """Tell whether to make another attempt after attempt number ``attempt`` failed (R104).

        Args:
            attempt: How many attempts have been made (1 after the first failure).
            elapsed: Time since the first attempt started.
            next_delay: The delay before the next attempt would start.

        Returns:
            False when ``maximum_attempts`` is reached, or when the next attempt would start
            at or after the ``total_duration`` deadline; True otherwise.
        """
        if self.maximum_attempts and attempt >= self.maximum_attempts:
            return False
        return elapsed + next_delay < self.effective_total_duration


def resolve_durability(
    method_durability: StepDurability | None,
    config_durability: StepDurability | None,
    *,
    has_recovery_route: bool = False,
) -> StepDurability:
    """Return the effective durability of one Step method, SYNC or ASYNC (R111).

    The method's own setting wins; otherwise a method with a recovery route (WaitFor with
    PROCEED, Execute with ``on_execute_failure_proceed_to``) is SYNC; otherwise the FlowConfig's
    setting applies; otherwise SYNC.

    Args:
        method_durability: ``wait_for_durability`` or ``execute_durability`` (None = DEFAULT).
        config_durability: ``FlowConfig.step_durability`` (None = DEFAULT).
        has_recovery_route: Whether the method's failure proceeds somewhere.

    Returns:
        ``StepDurability.SYNC`` or ``StepDurability.ASYNC``.
    """
    if method_durability not in (None, StepDurability.DEFAULT):
        return method_durability
    if has_recovery_route:
        return StepDurability.SYNC
    if config_durability not in (None, StepDurability.DEFAULT):
        return config_durability
    return StepDurability.SYNC


_TUPLE_FIELDS = (
    "wait_for_lock_attributes",
    "execute_lock_attributes",
    "wait_for_load_attribute_maps",
    "wait_for_load_attribute_map_instances",
    "wait_for_load_channels",
    "wait_for_load_channel_maps",
    "wait_for_load_channel_map_instances",
    "execute_load_attribute_maps",
    "execute_load_attribute_map_instances",
    "execute_load_channels",
    "execute_load_channel_maps",
    "execute_load_channel_map_instances",
)


@dataclass(frozen=True, slots=True)
class StepOptions:
    """Timeouts, retries, failure routing, durability, locks and state loading of a Step.

    Unset fields use the Flow's or the engine's defaults. Durations must be whole seconds.
    Sequences may be given as lists; they are stored as tuples.

    Attributes:
        wait_for_method_timeout: Limit of one ``wait_for`` attempt.
        execute_method_timeout: Limit of one ``execute`` attempt.
        heartbeat_timeout: Progress deadline of one attempt (R107).
        wait_for_retry: Retry policy of ``wait_for``.
        execute_retry: Retry policy of ``execute``.
        wait_for_failure: What happens when ``wait_for`` has used up its retries.
        wait_for_durability: Durability of ``wait_for``'s result.
        execute_durability: Durability of ``execute``'s result.
        wait_for_lock_attributes: Attribute locks held during ``wait_for``.
        execute_lock_attributes: Attribute locks held during ``execute``.
        wait_for_load_attribute_maps: AttributeMaps loaded whole for ``wait_for``.
        wait_for_load_attribute_map_instances: AttributeMap instances loaded for ``wait_for``.
        wait_for_load_channels: Channels whose pending messages ``wait_for`` may read.
        wait_for_load_channel_maps: ChannelMaps whose pending messages ``wait_for`` may read.
        wait_for_load_channel_map_instances: ChannelMap instances ``wait_for`` may read.
        execute_load_attribute_maps: AttributeMaps loaded whole for ``execute``.
        execute_load_attribute_map_instances: AttributeMap instances loaded for ``execute``.
        execute_load_channels: Channels whose pending messages ``execute`` may read.
        execute_load_channel_maps: ChannelMaps whose pending messages ``execute`` may read.
        execute_load_channel_map_instances: ChannelMap instances ``execute`` may read.
        execute_failure_proceed_to: The recovery Step class an exhausted ``execute`` moves to.
        execute_failure_options: Options for that recovery movement (None: its own options).
    """

    wait_for_method_timeout: timedelta | None = None
    execute_method_timeout: timedelta | None = None
    heartbeat_timeout: timedelta | None = None
    wait_for_retry: RetryPolicy | None = None
    execute_retry: RetryPolicy | None = None
    wait_for_failure: WaitForFailurePolicy = WaitForFailurePolicy.FAIL_FLOW
    wait_for_durability: StepDurability = StepDurability.DEFAULT
    execute_durability: StepDurability = StepDurability.DEFAULT
    wait_for_lock_attributes: tuple[AttributeLock, ...] = ()
    execute_lock_attributes: tuple[AttributeLock, ...] = ()
    wait_for_load_attribute_maps: tuple[AttributeMap[Any], ...] = ()
    wait_for_load_attribute_map_instances: tuple[AttributeMapLoad, ...] = ()
    wait_for_load_channels: tuple[Channel[Any], ...] = ()
    wait_for_load_channel_maps: tuple[ChannelMap[Any], ...] = ()
    wait_for_load_channel_map_instances: tuple[ChannelMapLoad, ...] = ()
    execute_load_attribute_maps: tuple[AttributeMap[Any], ...] = ()
    execute_load_attribute_map_instances: tuple[AttributeMapLoad, ...] = ()
    execute_load_channels: tuple[Channel[Any], ...] = ()
    execute_load_channel_maps: tuple[ChannelMap[Any], ...] = ()
    execute_load_channel_map_instances: tuple[ChannelMapLoad, ...] = ()
    execute_failure_proceed_to: type | None = None
    execute_failure_options: StepOptions | None = field(default=None)

    def __post_init__(self) -> None:
        """Validate the fields and store sequences as tuples."""
        for name in ("wait_for_method_timeout", "execute_method_timeout", "heartbeat_timeout"):
            require_whole_seconds("StepOptions", name, getattr(self, name))
        for name in ("wait_for_retry", "execute_retry"):
            policy = getattr(self, name)
            if policy is not None and not isinstance(policy, RetryPolicy):
                raise TypeError(f"StepOptions.{name} must be a RetryPolicy, got {policy!r}")
        require_enum("StepOptions", "wait_for_failure", self.wait_for_failure, WaitForFailurePolicy)
        require_enum("StepOptions", "wait_for_durability", self.wait_for_durability, StepDurability)
        require_enum("StepOptions", "execute_durability", self.execute_durability, StepDurability)
        for name in _TUPLE_FIELDS:
            object.__setattr__(self, name, as_tuple("StepOptions", name, getattr(self, name)))
        self._check_failure_route()

    def _check_failure_route(self) -> None:
        target = self.execute_failure_proceed_to
        if target is not None:
            object.__setattr__(self, "execute_failure_proceed_to", as_step_class(target))
        options = self.execute_failure_options
        if options is not None and not isinstance(options, StepOptions):
            raise TypeError(
                f"StepOptions.execute_failure_options must be StepOptions, got {options!r}"
            )
        if options is not None and target is None:
            raise ValueError(
                "StepOptions.execute_failure_options needs execute_failure_proceed_to; "
                "use on_execute_failure_proceed_to(step, options)"
            )

    def on_execute_failure_proceed_to(
        self, step: type | object, options: StepOptions | None = None
    ) -> StepOptions:
        """Return a copy that moves an exhausted ``execute`` to a recovery Step (R109).

        The recovery Step gets the failed execution's input and can read the error from
        ``context.recovery_error``.

        Args:
            step: The recovery Step class (or, 0.2 style, its instance).
            options: Options for that movement; None uses the recovery Step's own options.

        Returns:
            The new options.
        """
        return replace(
            self, execute_failure_proceed_to=as_step_class(step), execute_failure_options=options
        )

    def durability(
        self, method: Literal["wait_for", "execute"], config_durability: StepDurability | None
    ) -> StepDurability:
        """Return the effective durability of ``wait_for`` or ``execute`` (R111)."""
        if method == "wait_for":
            route = self.wait_for_failure is WaitForFailurePolicy.PROCEED
            return resolve_durability(
                self.wait_for_durability, config_durability, has_recovery_route=route
            )
        route = self.execute_failure_proceed_to is not None
        return resolve_durability(
            self.execute_durability, config_durability, has_recovery_route=route
        )
