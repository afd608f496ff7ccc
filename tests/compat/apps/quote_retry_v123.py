"""Retries before a continue-as-new, as a dex-python-sdk 1.23 application (issue 25, item 7).

``FetchQuote`` calls an external quote service that is down for its first three attempts; the
Step's retry policy backs off exponentially (``first``, then twice and four times that: 3 s,
6 s and 12 s with Dex's usual settings). The call is made either in Execute, which then moves
on to ``Settle``, or in WaitFor, whose Step then waits for a ``settle`` message. The run
continues as new meanwhile: the client asks for it with ``trigger_continue_as_new``, or the
Flow's ``continue_as_new_threshold`` is passed. The Flow is built from ``dex`` names only, so
the same application runs on the live engine (through a compat Worker and Client) and on a
simulation Engine.
"""

from __future__ import annotations

from datetime import timedelta

from dex import (
    Attribute,
    Channel,
    Context,
    Flow,
    FlowConfig,
    PersistenceSchema,
    RetryPolicy,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepOptions,
    Wait,
    go_to,
    graceful_complete,
)

CALLS: list[int] = []
"""The attempts that reached the quote service, in order."""
DOWN_FOR = 3
"""The service fails this many calls, then answers."""

served_on = Attribute("served_on_attempt", int)
settle = Channel("settle", str)


def quote_service(attempt: int) -> int:
    """The external call: unavailable for the first ``DOWN_FOR`` attempts."""
    CALLS.append(attempt)
    if attempt <= DOWN_FOR:
        raise ConnectionError(f"quote service unavailable (attempt {attempt})")
    return 1250


def backoff(first: timedelta) -> RetryPolicy:
    """Exponential backoff: ``first``, then doubling (3 s, 6 s, 12 s for a 3 s start)."""
    return RetryPolicy(initial_interval=first, backoff_coefficient=2.0, maximum_attempts=5)


class FetchQuote(Step[str]):
    def __init__(self, first: timedelta, in_wait_for: bool) -> None:
        self.first = first
        self.in_wait_for = in_wait_for

    def get_step_options(self) -> StepOptions:
        if self.in_wait_for:
            return StepOptions(wait_for_retry=backoff(self.first))
        return StepOptions(execute_retry=backoff(self.first))

    def wait_for(self, context: Context, symbol: str) -> Wait:
        if not self.in_wait_for:
            return Wait.skip_immediately()
        quote_service(context.attempt)
        served_on.set(context, context.attempt)
        return Wait.until(settle.for_one())

    def execute(self, context: Context, symbol: str) -> StepDecision:
        if self.in_wait_for:
            (note,) = settle.results(context)
            return graceful_complete(f"{symbol} {note}")
        quote_service(context.attempt)
        served_on.set(context, context.attempt)
        return go_to(Settle, symbol)


class Settle(Step[str]):
    def wait_for(self, context: Context, symbol: str) -> Wait:
        return Wait.until(settle.for_one())

    def execute(self, context: Context, symbol: str) -> StepDecision:
        (note,) = settle.results(context)
        return graceful_complete(f"{symbol} {note}")


class QuoteFlow(Flow[str]):
    def __init__(self, first: timedelta, in_wait_for: bool) -> None:
        self.fetch = FetchQuote(first, in_wait_for)

    def get_steps(self) -> StepList[str]:
        return StepList.start_step(self.fetch).other_steps(Settle())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(served_on, settle)


def start_options(threshold: int | None) -> StartFlowOptions | None:
    """Continue as new after ``threshold`` events of a run, or only when the client asks."""
    if threshold is None:
        return None
    return StartFlowOptions(config_override=FlowConfig(continue_as_new_threshold=threshold))
