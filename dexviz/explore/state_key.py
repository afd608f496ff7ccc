"""Canonical states: what two schedules must agree on to have reached "the same state".

Execution ids (``Type-N``), message ids and event sequence numbers depend on the order in
which things happened, so they are left out: a state is the Flow's status, its Attributes, each
Channel's queued values, the multiset of executions (Step type, phase, method, attempt, input,
reserved values), the virtual time, and how much work is pending. Two schedules that differ
only in which of two identical reviewers went first reach the same state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.state_copy import settled
from dexviz.explore.fingerprint import frozen_text


def _text(value: Any) -> str:
    return repr(frozen_text(value))  # a frozen record's repr, made once


def _execution(ex: Execution) -> tuple[Any, ...]:
    reserved = tuple(
        sorted((key, tuple(_text(m.value) for m in ms)) for key, ms in ex.held_messages.items())
    )
    timers = tuple(sorted(t.fire_at_ns for t in ex.started_timers if not t.done))
    return (ex.step_type, ex.phase.value, ex.method, ex.attempt, _text(ex.input), reserved, timers)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class SettledMemo:
    """Texts made from executions the engine never writes again, kept by identity.

    A snapshot shares a settled execution instead of copying it (``engine.state_copy``), so
    the states of one exploration hold the same object and its description is made once.
    Each entry holds its execution, so an id is not reused while it is cached.
    """

    def __init__(self, limit: int = 200_000) -> None:
        self._found: dict[int, tuple[Execution, str]] = {}
        self.limit = limit

    def clear(self) -> None:
        """Forget every kept text (``explore.caches.release_caches``)."""
        self._found.clear()

    def text(self, ex: Execution, make: Callable[[Execution], str]) -> str:
        """``make(ex)``, made once for a settled ``ex``."""
        found = self._found.get(id(ex))
        if found is not None and found[0] is ex:
            return found[1]
        text = make(ex)
        if settled(ex):
            if len(self._found) >= self.limit:
                self._found.clear()
            self._found[id(ex)] = (ex, text)
        return text


def _execution_digest(ex: Execution) -> str:
    return _digest(repr(_execution(ex)))


_DIGESTS = SettledMemo()


class ExecutionDigests:
    """Each execution's canonical description, hashed, recomputed only when a step touched it."""

    def __init__(self, saved: dict[str, str] | None = None) -> None:
        self._digests: dict[str, str] = {} if saved is None else dict(saved)

    def saved(self) -> dict[str, str]:
        """The digests now, to go on from in a schedule resumed at this state."""
        return dict(self._digests)

    def touch(self, run: FlowRun, execution_ids: Iterable[str]) -> None:
        """Recompute the executions a step's events named (and any new one)."""
        for execution_id in execution_ids:
            ex = run.executions.get(execution_id)
            if ex is not None:
                self._digests[execution_id] = _DIGESTS.text(ex, _execution_digest)

    def of(self, run: FlowRun) -> tuple[str, ...]:
        """The sorted digests of every execution of ``run``."""
        digests = self._digests
        if len(digests) != len(run.executions):
            self.touch(run, [k for k in run.executions if k not in digests])
        return tuple(sorted(digests[k] for k in run.executions))


def run_key(
    run: FlowRun, epoch_ns: int, digests: ExecutionDigests | None = None
) -> tuple[Any, ...]:
    """The order-free description of one Flow run."""
    queues = tuple(
        sorted((name, tuple(_text(m.value) for m in q)) for name, q in run.queues_view.items() if q)
    )
    if digests is None:
        executions: tuple[Any, ...] = tuple(sorted(map(_execution, run.executions.values())))
    else:
        executions = digests.of(run)
    attributes = tuple(sorted((str(k), _text(v)) for k, v in run.attributes.items()))
    completions = tuple(sorted(_text(c.value) for c in run.completions))
    return (
        run.flow_type,
        run.status.name,
        run.closing,
        run.graceful_requested,
        str(run.error_type),
        attributes,
        queues,
        executions,
        completions,
        -1 if run.closed_ns is None else run.closed_ns - epoch_ns,
    )


@dataclass(frozen=True)
class StateKey:
    """A canonical state, hashed: equal keys mean equal states up to ids and event order."""

    digest: str
    status: str

    def __str__(self) -> str:
        return self.digest[:10]


def state_key(
    runs: Iterable[FlowRun],
    now_ns: int,
    epoch_ns: int,
    pending: tuple[Any, ...],
    digests: ExecutionDigests | None = None,
) -> StateKey:
    """Hash the runs' canonical descriptions, the time since the epoch and pending work.

    ``digests`` caches execution descriptions across the steps of one schedule (the caller
    touches what each step changed); only one run may use one cache.
    """
    keys = sorted(run_key(run, epoch_ns, digests) for run in runs)
    digest = _digest(repr((keys, now_ns - epoch_ns, pending)))
    status = ",".join(sorted({k[1] for k in keys})) or "NONE"
    return StateKey(digest, status)
