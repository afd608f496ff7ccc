"""The start options a run records so that recovery can honor them: Flow retries, start delay.

They are recorded in ``FlowStartedOrContinued`` only when set, so histories of runs without
them are unchanged.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.options import RetryPolicy


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def _delta(value: Any) -> timedelta | None:
    return None if value is None else timedelta(seconds=float(value))


def start_payload(options: StartFlowOptions) -> dict[str, Any]:
    """The ``retry_policy`` and ``start_delay_s`` members of a start, when they are set."""
    payload: dict[str, Any] = {}
    policy = options.retry_policy
    if policy is not None:
        payload["retry_policy"] = {
            "initial_interval_s": _seconds(policy.initial_interval),
            "backoff_coefficient": policy.backoff_coefficient,
            "maximum_interval_s": _seconds(policy.maximum_interval),
            "maximum_attempts": policy.maximum_attempts,
            "total_duration_s": _seconds(policy.total_duration),
        }
    if options.start_delay and options.start_delay.total_seconds() > 0:
        payload["start_delay_s"] = options.start_delay.total_seconds()
    return payload


def retry_policy(stored: Any) -> RetryPolicy | None:
    """The Flow retry policy a start recorded (None when it had none)."""
    if not isinstance(stored, dict):
        return None
    return RetryPolicy(
        initial_interval=_delta(stored.get("initial_interval_s")),
        backoff_coefficient=float(stored.get("backoff_coefficient", 0.0)),
        maximum_interval=_delta(stored.get("maximum_interval_s")),
        maximum_attempts=int(stored.get("maximum_attempts", 0)),
        total_duration=_delta(stored.get("total_duration_s")),
    )
