"""Footprints decide which steps commute; owners name the execution of a silent step."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from dexviz import Event, EventKind
from dexviz.engine.core.loop import VirtualLoop
from dexviz.engine.core.scheduler import Scheduler
from dexviz.explore.footprint import ANY, Footprint, footprint_of
from dexviz.explore.owners import owner_of


def event(kind: EventKind, execution_id: str | None = "A-1", **payload: Any) -> Event:
    return Event(1, 0, kind, "f", "r", execution_id, "A" if execution_id else None, None, None,
                 payload)


def fp(reads: set[str], writes: set[str]) -> Footprint:
    return Footprint(frozenset(reads), frozenset(writes))


def test_disjoint_writes_commute_and_shared_ones_do_not() -> None:
    assert not fp(set(), {"exec:A-1"}).depends_on(fp(set(), {"exec:B-1"}))
    assert fp(set(), {"chan:t"}).depends_on(fp(set(), {"chan:t", "exec:B-1"}))
    assert fp({"chan:t"}, set()).depends_on(fp(set(), {"chan:t"}))
    assert not fp({"chan:t"}, set()).depends_on(fp({"chan:t"}, set()))


def test_wildcards_and_empty_footprints() -> None:
    anything = Footprint.reading(ANY)
    assert anything.depends_on(fp(set(), {"exec:B-1"}))
    assert not anything.depends_on(Footprint.reading("exec:B-1"))
    assert Footprint.everything().depends_on(Footprint.reading("x"))
    assert not Footprint.everything().depends_on(Footprint.empty())


def test_events_name_executions_channels_attributes_and_the_run() -> None:
    events = [
        event(EventKind.ATTEMPT_STARTED),
        event(EventKind.MESSAGE_PUBLISHED, channel="token", publisher="A-1"),
        event(EventKind.STEP_EXECUTE_COMPLETED, decision={"kind": "GRACEFUL_COMPLETE"},
              writes=[{"attribute": "note", "value": 1}]),
    ]
    found = footprint_of(events, lambda _: ["inbox"])
    assert found.writes == {"exec:A-1", "chan:token", "attr:note", "attr:*", "run"}
    assert found.reads == {"attr:*", "run", "chan:inbox"}
    assert footprint_of([event(EventKind.FLOW_CLOSED, None)]).writes == {"run"}
    assert footprint_of([]) is Footprint.empty()


def test_an_attempt_depends_on_any_attribute_write() -> None:
    attempt = footprint_of([event(EventKind.ATTEMPT_STARTED, "B-1")])
    write = footprint_of([event(EventKind.STEP_EXECUTE_COMPLETED,
                                writes=[{"attribute": "n", "value": 2}])])
    assert attempt.depends_on(write)


def test_the_owner_of_an_asyncio_wake_up_is_the_task_s_execution() -> None:
    scheduler = Scheduler(0)
    loop = VirtualLoop(scheduler)

    async def handler() -> None:
        await asyncio.sleep(1)

    task = loop.start_task(handler(), contextvars.copy_context())
    tasks = {task: "Edit-1"}
    first = scheduler.runnable()[0]
    assert owner_of(first, tasks) == "Edit-1"  # the Task's first step
    scheduler.pop()()
    timer = scheduler.runnable()[0]  # the sleep's timer sets a future the Task waits on
    assert owner_of(timer, tasks) == "Edit-1"
    assert owner_of(timer, {}) is None
    assert owner_of(lambda: None, tasks) is None
    task.get_coro().close()
