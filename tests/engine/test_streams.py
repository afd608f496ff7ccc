"""Streams: writes outside the commit (R180) and resumable reads by token (R181)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

import dexviz
from dexviz import (
    AsyncContext,
    Context,
    Engine,
    LongPollTimeoutError,
    PersistenceSchema,
    RetryPolicy,
    Step,
    StepDecision,
    StepOptions,
    Stream,
    dead_end,
    graceful_complete,
)
from tests.engine.flows_a import AdHocFlow

PROGRESS = Stream("progress", str, stream_capacity_bytes=400)
NOTES = dexviz.Attribute("note", str)


class AsyncWriter(Step[int]):
    """Writes to the Stream from an async Execute, then fails once."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=RetryPolicy(maximum_attempts=2))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        PROGRESS.write(context, f"attempt {context.attempt}")
        NOTES.set(context, f"attempt {context.attempt}")
        await asyncio.sleep(1)
        if context.attempt == 1:
            raise RuntimeError("flaky")
        return graceful_complete(n)


class GeneratorWriter(Step[int]):
    """Yields Stream writes from a sync generator Execute."""

    def execute(self, context: Context, n: int) -> Any:
        for i in range(n):
            yield PROGRESS.write(context, f"item {i}")
        return dead_end()


def _flow(step: Step[int]) -> AdHocFlow:
    return AdHocFlow("Streaming", step, schema=[PROGRESS, NOTES])


def test_r180_stream_writes_are_not_rolled_back_and_repeat_on_retry() -> None:
    engine = Engine([flow := _flow(AsyncWriter())])
    client = engine.client()
    client.start_flow(flow, "s", 7)
    assert client.wait_for_flow("s").single_output(int) == 7
    first = client.read_stream("s", PROGRESS)
    second = client.read_stream("s", PROGRESS, first.resume_token)
    assert (first.value, second.value) == ("attempt 1", "attempt 2")
    assert first.source == "#AsyncWriter-1"
    # The failed attempt's Attribute write was dropped; its Stream message was not (R180).
    assert client.get_attribute("s", NOTES) == "attempt 2"


def test_r181_reads_resume_by_token_and_wait_for_the_next_message() -> None:
    engine = Engine([flow := _flow(GeneratorWriter())])
    client = engine.client()
    client.start_flow(flow, "g", 3)
    token, seen = "", []
    for _ in range(3):
        message = client.read_stream("g", PROGRESS, token)
        seen.append(message.value)
        token = message.resume_token
    assert seen == ["item 0", "item 1", "item 2"]
    with pytest.raises(LongPollTimeoutError):
        client.read_stream("g", PROGRESS, token, timedelta(seconds=1))


def test_r181_capacity_drops_the_oldest_and_an_old_token_restarts_at_the_oldest() -> None:
    engine = Engine([flow := _flow(GeneratorWriter())])
    client = engine.client()
    client.start_flow(flow, "c", 40)
    engine.run_until_idle()
    page = client.list_stream_messages("c", PROGRESS, 100)
    values = [m.value for m in page.messages]
    assert values[0] == "item 39" and len(values) < 40  # newest first; the oldest were trimmed
    assert client.read_stream("c", PROGRESS).value == values[-1]


def test_list_stream_messages_pages_newest_first() -> None:
    engine = Engine([flow := _flow(GeneratorWriter())])
    client = engine.client()
    client.start_flow(flow, "p", 5)
    engine.run_until_idle()
    first = client.list_stream_messages("p", PROGRESS, 2)
    second = client.list_stream_messages("p", PROGRESS, 2, first.next_page_token)
    assert [m.value for m in first.messages] == ["item 4", "item 3"]
    assert [m.value for m in second.messages] == ["item 2", "item 1"]
    with pytest.raises(ValueError, match="page_size must be > 0"):
        client.list_stream_messages("p", PROGRESS, 0)


def test_clients_may_write_to_a_stream_of_a_flow_that_does_not_exist() -> None:
    engine = Engine([_flow(GeneratorWriter())])
    client = engine.client()
    client.write_stream("nobody", PROGRESS, "outside", "hello")
    message = client.read_stream("nobody", PROGRESS)
    assert (message.value, message.source) == ("hello", "outside")


def test_an_undeclared_stream_fails_the_attempt() -> None:
    other = Stream("other", str)

    class Writer(Step[int]):
        def get_step_options(self) -> StepOptions:
            return StepOptions(execute_retry=RetryPolicy(maximum_attempts=1))

        async def execute(self, context: AsyncContext, n: int) -> StepDecision:
            other.write(context, "x")
            return dead_end()

    run = dexviz.simulate(AdHocFlow("Undeclared", Writer(), schema=[PROGRESS]), 1)
    assert run.result.error_message is not None
    assert "Stream 'other' is not declared" in run.result.error_message


def test_a_stream_is_declared_in_the_persistence_schema() -> None:
    schema = PersistenceSchema.of(PROGRESS, NOTES)
    assert schema.streams == (PROGRESS,) and schema.attributes == (NOTES,)
    with pytest.raises(ValueError, match="stream_capacity_bytes must be > 0"):
        Stream("bad", str, 0)
