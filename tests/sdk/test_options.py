"""Step options (§2.4): RetryPolicy rules R102-R105, durability R111, StepOptions fields."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta
from typing import Any

import pytest

from dexviz.sdk.options import (
    DEFAULT_TOTAL_DURATION,
    RetryPolicy,
    StepDurability,
    StepOptions,
    WaitForFailurePolicy,
    as_step_class,
    resolve_durability,
)

S = timedelta(seconds=1)


class Charge:
    def execute(self, context: object, input: int) -> None:
        del context, input


class Refund(Charge):
    pass


def schedule(policy: RetryPolicy, attempt_seconds: float = 0.0) -> list[float]:
    """Start times of the attempts of a method that always fails (a fake clock)."""
    starts, now, attempt = [0.0], 0.0, 1
    while True:
        now += attempt_seconds
        delay = policy.backoff(attempt)
        if not policy.should_retry(attempt, timedelta(seconds=now), delay):
            return starts
        now += delay.total_seconds()
        starts.append(now)
        attempt += 1


def test_enums_keep_dex_members_and_values() -> None:
    assert [(m.name, m.value) for m in StepDurability] == [
        ("DEFAULT", "default"),
        ("SYNC", "sync"),
        ("ASYNC", "async"),
    ]
    assert [(m.name, m.value) for m in WaitForFailurePolicy] == [
        ("FAIL_FLOW", "fail_flow"),
        ("PROCEED", "proceed"),
    ]


def test_retry_policy_defaults_and_effective_values() -> None:
    policy = RetryPolicy()
    assert (policy.initial_interval, policy.backoff_coefficient, policy.maximum_interval) == (
        None,
        0.0,
        None,
    )
    assert (policy.maximum_attempts, policy.total_duration) == (0, None)
    assert policy.effective_initial_interval == S
    assert policy.effective_backoff_coefficient == 2.0
    assert policy.effective_maximum_interval == 100 * S
    assert policy.effective_total_duration == DEFAULT_TOTAL_DURATION == timedelta(hours=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.maximum_attempts = 3  # type: ignore[misc]


def test_r103_backoff_gaps_grow_then_cap() -> None:
    policy = RetryPolicy(initial_interval=S, backoff_coefficient=2, maximum_interval=5 * S)
    assert [policy.backoff(k).total_seconds() for k in range(1, 6)] == [1, 2, 4, 5, 5]


def test_r103_zero_fields_take_the_defaults() -> None:
    gaps = [RetryPolicy().backoff(k).total_seconds() for k in (1, 2, 3, 7, 8, 5000)]
    assert gaps == [1, 2, 4, 64, 100, 100]
    assert (
        RetryPolicy(initial_interval=200 * S).backoff(3) == 200 * S
    )  # default max never undercuts
    assert RetryPolicy(backoff_coefficient=1.0).backoff(9) == S
    assert RetryPolicy(initial_interval=2 * S, backoff_coefficient=1.5).backoff(2) == 3 * S
    with pytest.raises(ValueError, match="at least one failed attempt, got 0"):
        RetryPolicy().backoff(0)


def test_r102_maximum_attempts_counts_the_first_attempt() -> None:
    assert len(schedule(RetryPolicy(maximum_attempts=3))) == 3
    assert len(schedule(RetryPolicy(maximum_attempts=1))) == 1


def test_r104_total_duration_stops_the_next_attempt() -> None:
    policy = RetryPolicy(initial_interval=S, backoff_coefficient=2, total_duration=3 * S)
    assert schedule(policy) == [0.0, 1.0]
    assert policy.should_retry(1, timedelta(0), S) is True
    assert policy.should_retry(2, S, 2 * S) is False


def test_r104_without_limits_retries_until_the_default_total_duration() -> None:
    starts = schedule(RetryPolicy())
    assert starts[:4] == [0, 1, 3, 7] and starts[-1] < 4 * 3600 and len(starts) > 140


def test_r105_a_retry_after_delay_is_checked_like_any_other() -> None:
    policy = RetryPolicy(maximum_attempts=5, total_duration=10 * S)
    assert policy.should_retry(1, timedelta(0), 7 * S) is True
    assert policy.should_retry(1, 4 * S, 7 * S) is False


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"initial_interval": -S},
            ValueError,
            "RetryPolicy.initial_interval must be whole seconds",
        ),
        (
            {"maximum_interval": timedelta(milliseconds=1500)},
            ValueError,
            "maximum_interval must be whole seconds",
        ),
        (
            {"total_duration": timedelta(seconds=2**31)},
            ValueError,
            "total_duration must be whole seconds",
        ),
        ({"initial_interval": 5}, TypeError, "initial_interval must be a timedelta, got int"),
        (
            {"backoff_coefficient": -1.0},
            ValueError,
            "must be 0 (default 2.0) or at least 1, got -1.0",
        ),
        ({"backoff_coefficient": 0.5}, ValueError, "at least 1, got 0.5"),
        ({"backoff_coefficient": float("nan")}, ValueError, "at least 1, got nan"),
        ({"backoff_coefficient": True}, TypeError, "backoff_coefficient must be a float, got True"),
        (
            {"maximum_attempts": -1},
            ValueError,
            "maximum_attempts must be an int >= 0 (0: unlimited), got -1",
        ),
        ({"maximum_attempts": 2.0}, ValueError, "got 2.0"),
        (
            {"initial_interval": 10 * S, "maximum_interval": 5 * S},
            ValueError,
            "must not be less than initial_interval",
        ),
    ],
)
def test_retry_policy_rejects_bad_values(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        RetryPolicy(**kwargs)


@pytest.mark.parametrize(
    ("method", "config", "route", "expected"),
    [
        (None, StepDurability.ASYNC, False, StepDurability.ASYNC),
        (None, None, False, StepDurability.SYNC),
        (None, StepDurability.ASYNC, True, StepDurability.SYNC),
        (StepDurability.DEFAULT, StepDurability.DEFAULT, False, StepDurability.SYNC),
        (StepDurability.ASYNC, StepDurability.SYNC, True, StepDurability.ASYNC),
        (StepDurability.SYNC, StepDurability.ASYNC, False, StepDurability.SYNC),
    ],
)
def test_r111_resolve_durability(
    method: StepDurability | None,
    config: StepDurability | None,
    route: bool,
    expected: StepDurability,
) -> None:
    assert resolve_durability(method, config, has_recovery_route=route) is expected


def test_r111_step_options_know_their_recovery_routes() -> None:
    plain = StepOptions()
    assert plain.durability("execute", StepDurability.ASYNC) is StepDurability.ASYNC
    routed = plain.on_execute_failure_proceed_to(Refund)
    assert routed.durability("execute", StepDurability.ASYNC) is StepDurability.SYNC
    assert routed.durability("wait_for", StepDurability.ASYNC) is StepDurability.ASYNC
    proceed = StepOptions(wait_for_failure=WaitForFailurePolicy.PROCEED)
    assert proceed.durability("wait_for", StepDurability.ASYNC) is StepDurability.SYNC


def test_step_options_has_every_dex_field_with_its_default() -> None:
    names = [item.name for item in dataclasses.fields(StepOptions)]
    loads = [
        f"{method}_load_{kind}"
        for method in ("wait_for", "execute")
        for kind in (
            "attribute_maps",
            "attribute_map_instances",
            "channels",
            "channel_maps",
            "channel_map_instances",
        )
    ]
    assert names == [
        "wait_for_method_timeout",
        "execute_method_timeout",
        "heartbeat_timeout",
        "wait_for_retry",
        "execute_retry",
        "wait_for_failure",
        "wait_for_durability",
        "execute_durability",
        "wait_for_lock_attributes",
        "execute_lock_attributes",
        *loads,
        "execute_failure_proceed_to",
        "execute_failure_options",
    ]
    options = StepOptions()
    assert options.wait_for_failure is WaitForFailurePolicy.FAIL_FLOW
    assert options.execute_durability is StepDurability.DEFAULT
    assert all(getattr(options, name) == () for name in loads)


def test_step_options_store_sequences_as_tuples() -> None:
    lock = object()
    options = StepOptions(execute_lock_attributes=[lock], wait_for_load_channels=(lock,))  # type: ignore[arg-type]
    assert options.execute_lock_attributes == (lock,) and options.wait_for_load_channels == (lock,)
    with pytest.raises(
        TypeError, match="StepOptions.execute_load_channels must be a tuple, got str"
    ):
        StepOptions(execute_load_channels="token")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"execute_method_timeout": timedelta(milliseconds=10)},
            ValueError,
            "StepOptions.execute_method_timeout must be whole seconds",
        ),
        (
            {"wait_for_method_timeout": -S},
            ValueError,
            "wait_for_method_timeout must be whole seconds",
        ),
        ({"heartbeat_timeout": 10}, TypeError, "heartbeat_timeout must be a timedelta, got int"),
        ({"execute_retry": 3}, TypeError, "execute_retry must be a RetryPolicy, got 3"),
        (
            {"wait_for_failure": "proceed"},
            TypeError,
            "wait_for_failure must be a member of WaitForFailurePolicy (FAIL_FLOW, PROCEED)",
        ),
        (
            {"execute_durability": None},
            TypeError,
            "execute_durability must be a member of StepDurability",
        ),
        (
            {"execute_failure_options": StepOptions()},
            ValueError,
            "execute_failure_options needs execute_failure_proceed_to",
        ),
        (
            {"execute_failure_proceed_to": Refund, "execute_failure_options": 1},
            TypeError,
            "must be StepOptions, got 1",
        ),
        (
            {"execute_failure_proceed_to": 42},
            TypeError,
            "expected a Step class or instance, got 42",
        ),
    ],
)
def test_step_options_reject_bad_values(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        StepOptions(**kwargs)


def test_on_execute_failure_proceed_to_accepts_a_class_or_an_instance() -> None:
    retry = RetryPolicy(maximum_attempts=2)
    base = StepOptions(execute_retry=retry)
    by_class = base.on_execute_failure_proceed_to(Refund)
    by_instance = base.on_execute_failure_proceed_to(
        Refund(), StepOptions(heartbeat_timeout=10 * S)
    )
    assert (
        by_class.execute_failure_proceed_to is Refund and by_class.execute_failure_options is None
    )
    assert by_instance.execute_failure_proceed_to is Refund
    assert by_instance.execute_failure_options == StepOptions(heartbeat_timeout=10 * S)
    assert by_class.execute_retry is retry and base.execute_failure_proceed_to is None
    assert StepOptions(execute_failure_proceed_to=Refund()).execute_failure_proceed_to is Refund  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a Step class or instance"):
        base.on_execute_failure_proceed_to("Refund")


def test_as_step_class() -> None:
    assert as_step_class(Charge) is Charge and as_step_class(Charge()) is Charge
    with pytest.raises(TypeError, match="expected a Step class or instance, got <class 'int'>"):
        as_step_class(int)
