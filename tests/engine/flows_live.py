"""Helpers for the live-engine and Client tests (issue 3): engines in either mode, thread checks,
gates that hold a handler until the test lets it go, and history queries that work in both modes.

Rule tests define their own small Steps at module level (the Registry resolves handler
annotations from module globals) and assemble them into Flows with :class:`LFlow`. Live handlers
run on other threads, so they record what they saw in plain lists (``list.append`` is atomic)
and block on :class:`Gate` objects, never on bare sleeps, so that a test waits only as long as
the rule needs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from dexviz import (
    AttributeMap,
    ChannelMap,
    Context,
    Engine,
    Event,
    EventKind,
    Flow,
    RetryPolicy,
    Step,
    StepDecision,
    StepOptions,
    Wait,
    graceful_complete,
)
from tests.engine.flows_a import AdHocFlow as LFlow  # noqa: F401 - re-exported for the tests

THREAD_PREFIX = "dexviz-"
"""Every thread dexviz starts carries this prefix (engine, handler pool, asyncio loop)."""
MODES = ("simulation", "live")
"""Both ways to drive the engine; mode-agnostic tests are parametrized over them."""
SOON = timedelta(seconds=5)
"""A generous ceiling for waits that should end promptly (they return as soon as they can)."""
GATE_LIMIT_S = 10.0
"""No gate holds a handler longer than this, so a failing test cannot hang the run."""

ONE_ATTEMPT = RetryPolicy(maximum_attempts=1)
"""A method that is never retried."""
NO_RETRY = StepOptions(wait_for_retry=ONE_ATTEMPT, execute_retry=ONE_ATTEMPT)
"""Both methods fail for good on their first failed attempt."""


def retries(attempts: int, interval_s: int = 1) -> RetryPolicy:
    """A policy of ``attempts`` attempts with a fixed ``interval_s`` backoff."""
    return RetryPolicy(
        initial_interval=timedelta(seconds=interval_s),
        backoff_coefficient=1.0,
        maximum_attempts=attempts,
    )


# -- threads and engines -----------------------------------------------------------------------


def dexviz_threads() -> list[threading.Thread]:
    """The live threads dexviz started (by name prefix)."""
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` every 5 ms until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


@contextmanager
def engine_in(flows: Sequence[Flow[Any]], mode: str = "live", *, seed: int = 0) -> Iterator[Engine]:
    """An engine for the test body; closed afterwards, then checked for errors and leaks.

    After a body that did not raise, the engine's threads must have caught no error, and no
    thread dexviz started while the engine existed may still be alive (issue 3: nothing leaks).
    """
    before = set(dexviz_threads())
    engine = Engine(list(flows), mode=mode, seed=seed)
    try:
        yield engine
    finally:
        engine.close()
    assert engine.errors == ()
    leaked = [t.name for t in dexviz_threads() if t not in before]
    assert leaked == [], f"threads alive after close(): {leaked}"


class Gate:
    """Holds handlers until the test opens it; tells the test when a handler arrived.

    A sync handler calls :meth:`hold`; the test waits for :meth:`arrived` and later calls
    :meth:`open`. A hold gives up after ``GATE_LIMIT_S``. (Coroutine handlers are blocked with
    ``asyncio.sleep`` instead, so that cancellation reaches them.)
    """

    def __init__(self) -> None:
        self._open = threading.Event()
        self._arrivals = threading.Semaphore(0)

    def hold(self) -> bool:
        """Block the calling handler thread until the gate opens; True if it did."""
        self._arrivals.release()
        return self._open.wait(GATE_LIMIT_S)

    def arrived(self, timeout: float = 5.0) -> bool:
        """Wait until one more handler reached the gate."""
        return self._arrivals.acquire(timeout=timeout)

    def open(self) -> None:
        """Let every held handler (and later ones) pass."""
        self._open.set()


# -- history -----------------------------------------------------------------------------------


def of_kind(
    events: Iterable[Event], kind: EventKind, execution_id: str | None = None
) -> list[Event]:
    """The events of ``kind`` (about ``execution_id`` when given), in order."""
    return [
        e
        for e in events
        if e.kind == kind and (execution_id is None or e.execution_id == execution_id)
    ]


def reach(
    engine: Engine, flow_id: str, predicate: Callable[[Event], bool], timeout: float = 5.0
) -> Event:
    """The first event of ``flow_id`` matching ``predicate``, running or waiting until it exists.

    A simulation runs units until such an event is recorded (time skips only as far as needed);
    a live engine is polled until one appears.
    """

    def found() -> Event | None:
        return next((e for e in engine.history(flow_id) if predicate(e)), None)

    if engine.mode == "simulation" and found() is None:
        engine.run(until=predicate)
    else:
        wait_until(lambda: found() is not None, timeout)
    event = found()
    assert event is not None, f"no matching event in {flow_id}'s history"
    return event


def reach_kind(
    engine: Engine, flow_id: str, kind: EventKind, execution_id: str | None = None
) -> Event:
    """The first event of ``kind`` (about ``execution_id``), running or waiting until it exists."""
    return reach(
        engine,
        flow_id,
        lambda e: e.kind == kind and (execution_id is None or e.execution_id == execution_id),
    )


def waiting(engine: Engine, flow_id: str, execution_id: str) -> Event:
    """Wait until ``execution_id``'s WaitFor committed (it now waits on its conditions)."""
    return reach_kind(engine, flow_id, EventKind.STEP_WAIT_FOR_COMPLETED, execution_id)


def created_ids(engine: Engine, flow_id: str) -> list[str]:
    """The ids of every execution created in ``flow_id`` (all runs), in creation order."""
    return [
        e.execution_id or ""
        for e in of_kind(engine.history(flow_id), EventKind.STEP_EXECUTION_CREATED)
    ]


# -- Map instance keys with spaces and '/': the Step both modes' key tests run ---------------

KEYED_DATA = AttributeMap("data-map", str)
KEYED_INBOX = ChannelMap("inbox", str)
SPACED_KEY, SPACED_BOX = "special / key", "a b/c"
"""An Attribute key and a Channel instance key holding characters Dex's names escape."""


class CopiesIntoTheMap(Step[int]):
    """Waits for ``KEYED_INBOX[SPACED_BOX]``, stores the message at ``KEYED_DATA[SPACED_KEY]``."""

    def get_step_options(self) -> Any:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(KEYED_INBOX.for_one(SPACED_BOX))

    def execute(self, context: Context, n: int) -> StepDecision:
        (message,) = KEYED_INBOX.results(context, SPACED_BOX)
        KEYED_DATA.set(context, SPACED_KEY, message)
        return graceful_complete(message)
