"""The reference engine: the leanest in-memory step loop doing the benchmarks' work.

``make bench`` runs every engine benchmark against this engine in the same session and reports
ratios, which survive a noisy shared machine far better than absolute numbers. It is a floor,
not a competitor: it keeps what any engine of this kind must do per transition and nothing
more, written as tightly as plain Python allows (profiled: the loop, the pick and the commit
are inlined, a unit is a tuple, and one context object serves every attempt).

- Steps are classes with ``execute(ctx, input)`` and a ``wait_channel`` (None: no Wait; else
  ``wait_count(input)`` messages of it); a decision is a tuple:
  ``("next", ((step, input), ...))``, ``("done", output)`` or ``("end",)``.
- One execution per Step execution, with a ``Type-N`` id and its parent id (a ready unit is
  the tuple ``(flow, step, input, execution id, messages its Wait took)``).
- A seeded random choice among ready executions (``Random.randrange``'s draws, inlined as
  ``getrandbits`` with rejection; swap-remove).
- Channels with FIFO queues and waiters indexed by Channel; a publish offers the message to a
  waiter chosen by the same random source, so a hand-off costs the same whatever the number
  of contenders.
- Three history tuples per transition (AttemptStarted, StepExecuteCompleted,
  StepExecutionCreated), plus the Wait and publication records; a tuple per event, kept per
  Flow, numbered by its position.
- One "commit" per unit: the unit's tuples go to the Flow's history as the unit runs, with
  nothing else in between (there is no store to fail, so no buffer is needed).

``benchmarks/HISTORY.md`` keeps the numbers of the earlier, object-per-execution version.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

NEXT, DONE, END = "next", "done", "end"
STARTED, COMPLETED, CREATED, PUBLISHED, SATISFIED = range(5)
_BITS = [n.bit_length() for n in range(1024)]
"""``n.bit_length()`` for the usual numbers of ready units (a lookup instead of a call)."""


def _below(getrandbits: Any, n: int) -> int:
    """``Random.randrange(n)``'s draw (``_randbelow_with_getrandbits``) without its wrappers."""
    k = _BITS[n] if n < 1024 else n.bit_length()
    i: int = getrandbits(k)
    while i >= n:
        i = getrandbits(k)
    return i


class RefFlow:
    """One Flow run: its history, counters, Channel queues, waiters and outputs."""

    __slots__ = ("flow_id", "history", "counters", "queues", "waiters", "outputs")

    def __init__(self, flow_id: str) -> None:
        self.flow_id = flow_id
        self.history: list[tuple[Any, ...]] = []
        self.counters: dict[str, int] = {}
        self.queues: dict[str, deque[Any]] = {}
        self.waiters: dict[str, list[tuple[Any, ...]]] = {}
        self.outputs: list[Any] = []


class RefContext:
    """What a handler gets: staged publications and the messages its Wait took.

    One per engine, handed to every attempt in turn (attempts run one at a time).
    """

    __slots__ = ("published", "taken")

    def __init__(self) -> None:
        self.published: list[tuple[str, Any]] = []
        self.taken: Any = None

    def publish(self, channel: str, value: Any) -> None:
        """Stage a message; it is queued when the attempt commits."""
        self.published.append((channel, value))

    def results(self) -> list[Any]:
        """The values the Wait took."""
        return self.taken  # type: ignore[no-any-return]


class RefEngine:
    """Runs Flows to quiescence on a logical clock with a seeded ready-list choice."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.ready: list[tuple[Any, ...]] = []
        self.flows: dict[str, RefFlow] = {}
        self.now = 0

    def start(self, flow_id: str, step: Any, input: Any) -> None:
        """Start a Flow at ``step``."""
        flow = self.flows[flow_id] = RefFlow(flow_id)
        self._create(flow, step, input, "__start__")

    def _create(self, flow: RefFlow, step: Any, input: Any, parent: str) -> None:
        name = step.__name__
        counters = flow.counters
        number = counters[name] = counters.get(name, 0) + 1
        execution_id = f"{name}-{number}"
        history = flow.history
        history.append((len(history), self.now, CREATED, execution_id, input, parent))
        channel = step.wait_channel
        if channel is None:
            self.ready.append((flow, step, input, execution_id, None))
        else:
            flow.waiters.setdefault(channel, []).append((flow, step, input, execution_id, None))
            self._offer(flow, channel)

    def _offer(self, flow: RefFlow, channel: str) -> None:
        queue = flow.queues.get(channel)
        waiters = flow.waiters.get(channel)
        history = flow.history
        while queue and waiters:
            n = len(waiters)
            i = _below(self.rng.getrandbits, n) if n > 1 else 0
            ref, step, value, execution_id, _ = waiters[i]
            need = step.wait_count(value)
            if len(queue) < need:
                return
            waiters[i] = waiters[-1]
            waiters.pop()
            taken = [queue.popleft() for _ in range(need)] if need > 1 else [queue.popleft()]
            history.append((len(history), self.now, SATISFIED, execution_id, channel, need))
            self.ready.append((ref, step, value, execution_id, taken))

    def run(self) -> int:  # noqa: C901 - one loop on purpose: it runs once per unit
        """Run every ready execution (seeded choice); return the number of transitions."""
        ready, ctx, bits = self.ready, RefContext(), _BITS
        getrandbits = self.rng.getrandbits
        units = 0
        while ready:
            n = len(ready)
            if n > 1:  # _below(getrandbits, n), inlined
                k = bits[n] if n < 1024 else n.bit_length()
                i = getrandbits(k)
                while i >= n:
                    i = getrandbits(k)
            else:
                i = 0
            flow, step, value, execution_id, ctx.taken = ready[i]
            ready[i] = ready[-1]
            ready.pop()
            self.now = now = self.now + 1
            decision = step.execute(ctx, value)
            history = flow.history
            seq = len(history)
            # The unit's commit: the attempt's two events, then what the decision made.
            history += ((seq, now, STARTED, execution_id, 1),
                        (seq + 1, now, COMPLETED, execution_id, decision))  # fmt: skip
            published = ctx.published
            if published:
                for channel, message in published:
                    flow.queues.setdefault(channel, deque()).append(message)
                    history.append((len(history), now, PUBLISHED, execution_id, channel))
            kind = decision[0]
            if kind is NEXT:
                counters = flow.counters
                for next_step, next_value in decision[1]:
                    if next_step.wait_channel is not None:
                        self._create(flow, next_step, next_value, execution_id)
                        continue
                    # _create, inlined for a Step without a Wait.
                    name = next_step.__name__
                    number = counters[name] = counters.get(name, 0) + 1
                    next_id = f"{name}-{number}"
                    history.append((len(history), now, CREATED, next_id, next_value, execution_id))
                    ready.append((flow, next_step, next_value, next_id, None))
            elif kind is DONE:
                flow.outputs.append(decision[1])
            if published:
                ctx.published = []
                for channel, _ in published:
                    self._offer(flow, channel)
            units += 1
        return units


# -- the benchmarks' Flows, written for the reference engine --------------------------------

CHAIN_LENGTH = 10


class Link:
    """One Step of a chain; the tenth completes the Flow."""

    wait_channel = None

    @staticmethod
    def execute(ctx: RefContext, n: int) -> tuple[Any, ...]:
        return (NEXT, ((Link, n + 1),)) if n + 1 < CHAIN_LENGTH else (DONE, n)


class Fan:
    """Start ``width`` branches and the join."""

    wait_channel = None

    @staticmethod
    def execute(ctx: RefContext, width: int) -> tuple[Any, ...]:
        return (NEXT, tuple((Branch, i) for i in range(width)) + ((Join, width),))


class Branch:
    """Report one result."""

    wait_channel = None

    @staticmethod
    def execute(ctx: RefContext, i: int) -> tuple[Any, ...]:
        ctx.publish("done", i)
        return (END,)


class Join:
    """Wait for every branch."""

    wait_channel = "done"

    @staticmethod
    def wait_count(width: int) -> int:
        return width

    @staticmethod
    def execute(ctx: RefContext, width: int) -> tuple[Any, ...]:
        return (DONE, len(ctx.results()))


ROUNDS = 1


class Contend:
    """Start ``contenders`` branches that take the token ``ROUNDS`` times each."""

    wait_channel = None

    @staticmethod
    def execute(ctx: RefContext, contenders: int) -> tuple[Any, ...]:
        ctx.publish("token", "t")
        return (NEXT, tuple((Take, ROUNDS) for _ in range(contenders)))


class Take:
    """Wait for the token, then hand it on."""

    wait_channel = "token"

    @staticmethod
    def wait_count(left: int) -> int:
        return 1

    @staticmethod
    def execute(ctx: RefContext, left: int) -> tuple[Any, ...]:
        ctx.publish("token", "t")
        return (NEXT, ((Take, left - 1),)) if left > 1 else (END,)


class Park:
    """Wait on a Channel nobody publishes to."""

    wait_channel = "token"

    @staticmethod
    def wait_count(n: int) -> int:
        return 1

    @staticmethod
    def execute(ctx: RefContext, n: int) -> tuple[Any, ...]:
        return (END,)
