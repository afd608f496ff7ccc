"""Helpers for the engine rule tests of sections 6-10, 13 and 15 (R79-R130, R143-R172).

Rule tests define their own small Steps at module level (the Registry resolves handler
annotations from module globals) and assemble them into Flows with :class:`BFlow`. Steps record
what their handlers saw in plain Python lists: for Dex that is an "external system", so the lists
keep what failed and canceled attempts did too, which is what several rules need to observe.

The token helpers at the bottom count where the contract-edit token is at one commit: queued in
its Channel, reserved by a handoff whose Execute has not committed, or held by the branch that is
inside the section (an active EditContract, SaveContractEdit or ReleaseContractEditToken).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

from dexviz import (
    Engine,
    Event,
    EventKind,
    Flow,
    FlowState,
    History,
    RetryPolicy,
    StepOptions,
)
from tests.engine.flows_a import AdHocFlow as BFlow
from tests.engine.flows_a import started

__all__ = ["BFlow", "started"]  # re-exported for the test modules

EPOCH_NS = 1_767_225_600 * 10**9
"""Where virtual time starts in simulation (2026-01-01T00:00:00Z)."""
SECOND_NS = 10**9

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


def settled(flow: Flow[Any], input: Any = None, *, seed: int = 0, **kwargs: Any) -> Engine:
    """An engine with ``flow`` started as ``flow-1`` and run until idle."""
    engine = started(flow, input, seed=seed, **kwargs)
    engine.run_until_idle()
    return engine


def settle_now(engine: Engine) -> None:
    """Run every unit that is ready without advancing virtual time past now."""
    runtime = engine._rt
    while runtime.run_unit(runtime.now()) is not None:
        pass


def history(engine: Engine) -> History:
    """The history of ``flow-1``."""
    return engine.history("flow-1")


def of_kind(
    events: Iterable[Event], kind: EventKind, execution_id: str | None = None
) -> list[Event]:
    """The events of ``kind`` (about ``execution_id`` when given), in order."""
    return [
        e
        for e in events
        if e.kind == kind and (execution_id is None or e.execution_id == execution_id)
    ]


def attempt_starts(engine: Engine, execution_id: str, method: str = "execute") -> list[float]:
    """Virtual seconds (since the epoch of the simulation) at which each attempt started."""
    return [
        rel_s(e.time_ns)
        for e in of_kind(history(engine), EventKind.ATTEMPT_STARTED, execution_id)
        if e.method == method
    ]


def rel_s(time_ns: int) -> float:
    """Engine time as seconds since the simulation epoch."""
    return (time_ns - EPOCH_NS) / SECOND_NS


def now_s(engine: Engine) -> float:
    """The engine's virtual time, in seconds since the simulation epoch."""
    return rel_s(engine.time_ns)


def queued(engine: Engine, channel: str) -> tuple[Any, ...]:
    """The values queued in ``channel`` of ``flow-1`` (reserved messages excluded), front first."""
    return tuple(engine.flow_state("flow-1").channels.get(channel, ()))


def active(engine: Engine) -> dict[str, str]:
    """The active executions of ``flow-1`` and their phases."""
    return {a.execution_id: a.phase for a in engine.flow_state("flow-1").active_executions}


def created(engine: Engine) -> list[str]:
    """The ids of every execution of ``flow-1``, in creation order."""
    events = of_kind(history(engine), EventKind.STEP_EXECUTION_CREATED)
    return [e.execution_id or "" for e in events]


def run_until(engine: Engine, predicate: Callable[[Event], bool]) -> list[Event]:
    """Run until a unit commits an event matching ``predicate``; fail if it never happens."""
    events = engine.run(until=predicate)
    assert any(predicate(e) for e in events), "the awaited event never happened"
    return events


def attempt_started(execution_id: str, method: str = "execute") -> Callable[[Event], bool]:
    """Matches the AttemptStarted event of ``execution_id``'s ``method``."""
    return lambda e: (
        e.kind == EventKind.ATTEMPT_STARTED
        and e.execution_id == execution_id
        and e.method == method
    )


def event_is(kind: EventKind, execution_id: str | None = None) -> Callable[[Event], bool]:
    """Matches events of ``kind`` (about ``execution_id`` when given)."""
    return lambda e: e.kind == kind and (execution_id is None or e.execution_id == execution_id)


def outputs(engine: Engine) -> list[tuple[str, str, Any]]:
    """The result's completions as (step type, execution id, value)."""
    return [
        (c.step_type, c.step_execution_id, c.value) for c in engine.result("flow-1").completions
    ]


# -- the contract-edit token ------------------------------------------------------------------

TOKEN_CHANNEL = "contractEditToken"
FINISHED_CHANNEL = "contractEditFinished"
SECTION_STEPS = frozenset({"EditContract", "SaveContractEdit", "ReleaseContractEditToken"})
"""The Steps a branch runs while it is inside the critical section, after its handoff."""


def reserved_tokens(state: FlowState) -> int:
    """Tokens taken by a wait whose execution's Execute has not committed."""
    return sum(len(a.reserved.get(TOKEN_CHANNEL, ())) for a in state.active_executions)


def section_holders(state: FlowState) -> list[str]:
    """The branches inside the section: handoffs holding a reserved token, and section Steps."""
    return [
        a.execution_id
        for a in state.active_executions
        if a.step_type in SECTION_STEPS or a.reserved.get(TOKEN_CHANNEL)
    ]


def token_count(state: FlowState) -> int:
    """Queued tokens + reserved tokens + tokens held by a branch in a section Step (R172)."""
    queued_tokens = len(state.channels.get(TOKEN_CHANNEL, ()))
    in_section = sum(1 for a in state.active_executions if a.step_type in SECTION_STEPS)
    return queued_tokens + reserved_tokens(state) + in_section


class TokenInvariant:
    """Checks token conservation and mutual exclusion after every commit of ``flow_id``.

    Before the token's first publication there is no token (count 0); from then on there is
    exactly one (R172).

    It listens to the engine's recorder, which calls it for each event of a commit once the
    whole commit is applied, so every check sees a committed state; it checks once per store
    commit. Violations are collected, not raised, because the listener runs inside the engine.
    """

    def __init__(self, engine: Engine, flow_id: str = "flow-1") -> None:
        self.engine = engine
        self.flow_id = flow_id
        self.violations: list[str] = []
        self.commits_checked = 0
        self.max_holders = 0
        self.published = False
        self._scanned = 0
        self._store = engine._rt.store
        self._last_commit = -1
        engine._rt.recorder.listeners.append(self._on_event)

    def _on_event(self, event: Event) -> None:
        commit = self._store.commits
        if event.flow_id != self.flow_id or commit == self._last_commit:
            return
        self._last_commit = commit
        committed = self.engine.history(self.flow_id)
        for seen in committed[self._scanned :]:
            if seen.kind == EventKind.MESSAGE_PUBLISHED:
                self.published |= seen.payload["channel"] == TOKEN_CHANNEL
        self._scanned = len(committed)
        state = self.engine.flow_state(self.flow_id)
        self.commits_checked += 1
        count = token_count(state)
        holders = section_holders(state)
        self.max_holders = max(self.max_holders, len(holders))
        if count != (1 if self.published else 0):
            self.violations.append(f"after {event.describe()}: {count} tokens ({state!r})")
        if len(holders) > 1:
            self.violations.append(f"after {event.describe()}: {holders} inside the section")


def payloads(events: Iterable[Event]) -> list[Mapping[str, Any]]:
    """The payloads of ``events``."""
    return [e.payload for e in events]
