"""How long one method attempt may run, cut short by the retry window, and what its timeout says.

An attempt ends at its method timeout (R106) or when the retry policy's ``total_duration``, one
deadline over every attempt counted from the method's start, passes (R104), whichever is first.
An attempt that starts with nothing left of the window (a first attempt that waited for its
Attribute locks past it, a retry or a relaunch after a crash that starts late) fails at once
without its handler being called, sync or async, in simulation or live; its failure says that the
window had ended instead of reporting a timeout "after 0 s".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from dexviz.engine.core.state import Execution
from dexviz.sdk.options import RetryPolicy

DEFAULT_RETRY = RetryPolicy(total_duration=timedelta(hours=4))
"""Dex's default: backoff 1 s x2 up to 100 s, attempts unlimited within 4 hours (R103, R104)."""
DEFAULT_METHOD_TIMEOUT_NS = 2 * 3600 * 1_000_000_000
"""A regular attempt may run two hours by default (R106, newer docs)."""


@dataclass(frozen=True)
class AttemptDeadline:
    """When a running attempt times out, and why then.

    Attributes:
        limit_ns: From the attempt's start to its timeout (0 when the window had ended).
        method_limit_ns: The method timeout alone (R106).
        total_ns: The retry policy's ``total_duration`` in nanoseconds (0 when it has none).
        left_ns: What was left of the retry window when the attempt started (negative once
            passed); None when the policy has no ``total_duration``.
        waited_ns: How long the method waited between its start and this attempt (the lock
            wait of a first attempt); 0 for a retry.
        locks: The Attributes the method locks, by their locked key.
    """

    limit_ns: int
    method_limit_ns: int
    total_ns: int
    left_ns: int | None
    waited_ns: int
    locks: tuple[str, ...]

    @classmethod
    def of(cls, ex: Execution, now_ns: int) -> AttemptDeadline:
        """The deadline of ``ex``'s current attempt of its method, starting at ``now_ns``."""
        options = ex.options
        wait_for = ex.method == "wait_for"
        timeout = options.wait_for_method_timeout if wait_for else options.execute_method_timeout
        method_limit = _ns(timeout) if timeout else DEFAULT_METHOD_TIMEOUT_NS
        policy = (options.wait_for_retry if wait_for else options.execute_retry) or DEFAULT_RETRY
        total = _ns(policy.effective_total_duration)
        left = ex.first_started_ns + total - now_ns if total else None
        locks = options.wait_for_lock_attributes if wait_for else options.execute_lock_attributes
        return cls(
            limit_ns=method_limit if left is None else max(0, min(method_limit, left)),
            method_limit_ns=method_limit,
            total_ns=total,
            left_ns=left,
            waited_ns=now_ns - ex.first_started_ns if ex.attempt == 1 else 0,
            locks=tuple(lock.physical_name for lock in locks),
        )

    @property
    def window_had_ended(self) -> bool:
        """Whether the retry window was over before the attempt started."""
        return self.left_ns is not None and self.left_ns <= 0

    def message(self, where: str, attempt: int) -> str:
        """What the attempt's TimeoutError says; ``where`` names the Flow, Step and method."""
        total = f"total_duration {_s(self.total_ns)} s"
        if self.window_had_ended:
            ended = (f"{where} attempt {attempt} started after its retry window "
                     f"({total} from the method's start) had ended")
            if self.waited_ns > 0 and self.locks:
                names = ", ".join(repr(name) for name in self.locks)
                return (f"{ended}: it waited {_s(self.waited_ns)} s for its lock on {names}, "
                        f"so it was stopped at once")
            return f"{ended}, so it was stopped at once"
        timed_out = f"{where} attempt {attempt} timed out after {_s(self.limit_ns)} s"
        if self.limit_ns < self.method_limit_ns:
            return f"{timed_out}, when its retry window ({total}) ended"
        return timed_out


def _ns(duration: timedelta) -> int:
    return int(duration.total_seconds() * 1e9)


def _s(ns: int) -> str:
    return f"{ns / 1e9:g}"
