"""The Dex floor: the per-transition work Dex's contract fixes, with no checks at all.

``make bench`` compares dexviz with ``reference_engine.py``, the smallest step loop doing the
benchmarks' work. That loop does less than any Dex engine can: a Dex Step with a WaitFor runs
it as a method attempt of its own, and each attempt, satisfaction and publication is a history
event. This engine keeps exactly that contract and nothing else, so the gap between it and the
reference is what Dex's semantics cost in pure Python, and the gap between dexviz and it is
what dexviz's checks and generality cost:

- every method attempt (WaitFor, Execute) is a unit of its own, picked by a seeded draw from
  the ready list (swap-remove), with a context object per attempt;
- the history events of a Dex hand-off, as 10-field tuples shaped like ``dexviz.Event``:
  AttemptStarted, StepWaitForCompleted, WaitSatisfied, MessageConsumed, AttemptStarted,
  StepExecuteCompleted, MessagePublished, StepExecutionCreated; the two completion payloads
  are built lazily (slot objects), the others are dicts of scalars;
- a UUIDv7-shaped message id per publication, a ``Type-N`` execution per Step execution;
- a waiter picked at random per message, one commit (history extend) per unit.

Nothing is validated (inputs, targets, Channels, decisions), nothing can fail or retry, and
there are no timers, locks, options or codecs.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

ATTEMPT_STARTED, WAIT_FOR_COMPLETED, WAIT_SATISFIED, MESSAGE_CONSUMED = range(4)
EXECUTE_COMPLETED, MESSAGE_PUBLISHED, EXECUTION_CREATED = range(4, 7)
EPOCH_NS = 1_767_225_600_000_000_000
NO_PAYLOAD: dict[str, Any] = {}


class Wait:
    """What a WaitFor returns: one Channel and how many messages it takes."""

    __slots__ = ("channel", "count")

    def __init__(self, channel: str, count: int) -> None:
        self.channel = channel
        self.count = count


class Decision:
    """What an Execute returns: the next Steps and their inputs (none: the branch ends)."""

    __slots__ = ("moves",)

    def __init__(self, moves: tuple[tuple[Any, Any], ...]) -> None:
        self.moves = moves


class Completed:
    """A completion payload kept as its commit-time values (built into a dict when read)."""

    __slots__ = ("started_ns", "attempt", "result", "published")

    def __init__(self, started_ns: int, attempt: int, result: Any, published: Any) -> None:
        self.started_ns = started_ns
        self.attempt = attempt
        self.result = result
        self.published = published


class Execution:
    """One Step execution ``Type-N``."""

    __slots__ = ("execution_id", "step", "input", "started_ns")

    def __init__(self, execution_id: str, step: Any, input: Any) -> None:
        self.execution_id = execution_id
        self.step = step
        self.input = input
        self.started_ns = 0


class Context:
    """What a handler gets: its execution, and the messages it publishes (staged)."""

    __slots__ = ("execution", "method", "staged")

    def __init__(self, execution: Execution, method: str) -> None:
        self.execution = execution
        self.method = method
        self.staged: list[tuple[str, Any]] | None = None

    def publish(self, channel: str, value: Any) -> None:
        """Stage a message; it is queued when the attempt commits."""
        if self.staged is None:
            self.staged = []
        self.staged.append((channel, value))


class Run:
    """One Flow run: history, execution counters, Channel queues and waiters."""

    __slots__ = ("flow_id", "run_id", "seq", "history", "counts", "queues", "waiters")

    def __init__(self, flow_id: str) -> None:
        self.flow_id = flow_id
        self.run_id = "run-1"
        self.seq = 0
        self.history: list[tuple[Any, ...]] = []
        self.counts: dict[str, int] = {}
        self.queues: dict[str, deque[tuple[str, str, Any]]] = {}
        self.waiters: dict[str, list[Execution]] = {}


class FloorEngine:
    """Runs Flows to quiescence, one method attempt per unit, recording Dex's events."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.ids = random.Random(seed + 1)
        self.ready: list[tuple[Run, Execution, str]] = []
        self.now = EPOCH_NS
        millis = f"{(EPOCH_NS // 1_000_000) & 0xFFFFFFFFFFFF:012x}"
        self.id_prefix = f"{millis[:8]}-{millis[8:]}-7"

    def start(self, flow_id: str, step: Any, input: Any) -> Run:
        """Start a Flow at ``step``."""
        run = Run(flow_id)
        self._create(run, step, input, "__start__", run.history)
        return run

    def run(self) -> int:
        """Run every ready unit (seeded choice); return the number of units."""
        ready, bits = self.ready, self.rng.getrandbits
        units = 0
        while ready:
            n = len(ready)
            index = 0
            if n > 1:
                width = n.bit_length()
                index = bits(width)
                while index >= n:
                    index = bits(width)
            run, ex, method = ready[index]
            ready[index] = ready[-1]
            del ready[-1]
            buffer: list[tuple[Any, ...]] = []
            ex.started_ns = self.now
            self._event(run, buffer, ATTEMPT_STARTED, ex, method, NO_PAYLOAD)
            if method == "wait_for":
                self._wait_for(run, ex, buffer)
            else:
                self._execute(run, ex, buffer)
            run.history.extend(buffer)
            units += 1
        return units

    def _event(
        self, run: Run, buffer: list[tuple[Any, ...]], kind: int, ex: Execution,
        method: str | None, payload: Any,
    ) -> None:
        run.seq += 1
        attempt = 1 if method else None
        buffer.append((run.seq, self.now, kind, run.flow_id, run.run_id, ex.execution_id,
                       ex.step.__name__, method, attempt, payload))  # fmt: skip

    def _wait_for(self, run: Run, ex: Execution, buffer: list[tuple[Any, ...]]) -> None:
        wait = ex.step.wait_for(Context(ex, "wait_for"), ex.input)
        completed = Completed(ex.started_ns, 1, wait, ())
        self._event(run, buffer, WAIT_FOR_COMPLETED, ex, "wait_for", completed)
        run.waiters.setdefault(wait.channel, []).append(ex)
        self._offer(run, wait.channel, buffer)

    def _execute(self, run: Run, ex: Execution, buffer: list[tuple[Any, ...]]) -> None:
        ctx = Context(ex, "execute")
        decision = ex.step.execute(ctx, ex.input)
        published = []
        for channel, value in ctx.staged or ():
            message = (self._message_id(), channel, value)
            run.queues.setdefault(channel, deque()).append(message)
            published.append(message)
        completed = Completed(ex.started_ns, 1, decision, published)
        self._event(run, buffer, EXECUTE_COMPLETED, ex, "execute", completed)
        for message_id, channel, value in published:
            payload = {"channel": channel, "message_id": message_id, "value": value,
                       "publisher": ex.execution_id}  # fmt: skip
            self._event(run, buffer, MESSAGE_PUBLISHED, ex, "execute", payload)
        for step, value in decision.moves:
            self._create(run, step, value, ex.execution_id, buffer)
        for _, channel, _ in published:
            self._offer(run, channel, buffer)

    def _create(
        self, run: Run, step: Any, input: Any, parent: str, buffer: list[tuple[Any, ...]]
    ) -> None:
        name = step.__name__
        number = run.counts[name] = run.counts.get(name, 0) + 1
        ex = Execution(f"{name}-{number}", step, input)
        has_wait_for = hasattr(step, "wait_for")
        payload = {"input": input, "from_execution_id": parent, "reason": "decision",
                   "has_wait_for": has_wait_for}  # fmt: skip
        self._event(run, buffer, EXECUTION_CREATED, ex, None, payload)
        self.ready.append((run, ex, "wait_for" if has_wait_for else "execute"))

    def _offer(self, run: Run, channel: str, buffer: list[tuple[Any, ...]]) -> None:
        queue, waiters = run.queues.get(channel), run.waiters.get(channel)
        while queue and waiters:
            index = self.rng.randrange(len(waiters)) if len(waiters) > 1 else 0
            ex = waiters[index]
            waiters[index] = waiters[-1]
            waiters.pop()
            message_id, _, _ = queue.popleft()
            taken = {"channel": channel, "message_id": message_id}
            satisfied = {"conditions": [0], "timers_fired": [], "messages": [taken]}
            self._event(run, buffer, WAIT_SATISFIED, ex, None, satisfied)
            consumed = {"channel": channel, "message_id": message_id,
                        "consumer": ex.execution_id}  # fmt: skip
            self._event(run, buffer, MESSAGE_CONSUMED, ex, None, consumed)
            self.ready.append((run, ex, "execute"))

    def _message_id(self) -> str:
        bits = self.ids.getrandbits
        text = f"{bits(12) << 64 | 2 << 62 | bits(62):019x}"
        return f"{self.id_prefix}{text[:3]}-{text[3:7]}-{text[7:]}"


# -- the token hand-off of benchmarks/_flows.py, for this engine ------------------------------

ROUNDS = 1
TOKEN = "token"


class Contend:
    """Publish the token and start ``contenders`` branches."""

    @staticmethod
    def execute(ctx: Context, contenders: int) -> Decision:
        ctx.publish(TOKEN, "t")
        return Decision(tuple((Take, ROUNDS) for _ in range(contenders)))


class Take:
    """Wait for the token, then hand it on; loop ``left`` times."""

    @staticmethod
    def wait_for(ctx: Context, left: int) -> Wait:
        return Wait(TOKEN, 1)

    @staticmethod
    def execute(ctx: Context, left: int) -> Decision:
        ctx.publish(TOKEN, "t")
        return Decision(((Take, left - 1),) if left > 1 else ())


# -- the 10-step chain of benchmarks/_flows.py -------------------------------------------------

CHAIN_LENGTH = 10


class Link:
    """One Step of a chain; the tenth ends it."""

    @staticmethod
    def execute(ctx: Context, n: int) -> Decision:
        return Decision(((Link, n + 1),) if n + 1 < CHAIN_LENGTH else ())
