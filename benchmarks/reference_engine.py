"""The reference engine: the smallest in-memory step loop doing the benchmarks' work.

``make bench`` runs every engine benchmark against this engine in the same session and reports
ratios, which survive a noisy shared machine far better than absolute numbers. It is a floor,
not a competitor: it keeps what any engine of this kind must do per transition and nothing
more.

- Steps are classes with ``execute(ctx, input)``; a decision is a tuple:
  ``("next", ((step, input), ...))``, ``("done", output)`` or ``("end",)``.
- One execution per Step execution, with a ``Type-N`` id and its parent id.
- A seeded random choice among ready executions (``randrange``, swap-remove).
- Channels with FIFO queues and waiters indexed by Channel; a publish offers the message to a
  waiter chosen by the same random source, so a hand-off costs the same whatever the number
  of contenders.
- Three history tuples per transition (AttemptStarted, StepExecuteCompleted,
  StepExecutionCreated), plus the Wait and publication records; a tuple per event, kept per
  Flow.
- One "commit" per unit: the unit's tuples appended to the Flow's history at once.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

NEXT, DONE, END = "next", "done", "end"


class RefFlow:
    """One Flow run: its history, counters, Channel queues, waiters and outputs."""

    __slots__ = ("flow_id", "history", "counters", "queues", "waiters", "active", "outputs")

    def __init__(self, flow_id: str) -> None:
        self.flow_id = flow_id
        self.history: list[tuple[Any, ...]] = []
        self.counters: dict[str, int] = {}
        self.queues: dict[str, deque[Any]] = {}
        self.waiters: dict[str, list[RefExecution]] = {}
        self.active = 0
        self.outputs: list[Any] = []


class RefExecution:
    """One Step execution: id, Step, input, parent, and the messages its Wait took."""

    __slots__ = ("execution_id", "step", "input", "parent", "flow", "taken")

    def __init__(self, execution_id: str, step: Any, input: Any, parent: str, flow: RefFlow):
        self.execution_id = execution_id
        self.step = step
        self.input = input
        self.parent = parent
        self.flow = flow
        self.taken: list[Any] = []


class RefContext:
    """What a handler gets: its execution, staged publications, and the messages it took."""

    __slots__ = ("execution", "published")

    def __init__(self, execution: RefExecution) -> None:
        self.execution = execution
        self.published: list[tuple[str, Any]] = []

    def publish(self, channel: str, value: Any) -> None:
        """Stage a message; it is queued when the attempt commits."""
        self.published.append((channel, value))

    def results(self) -> list[Any]:
        """The values the Wait took."""
        return self.execution.taken


class RefEngine:
    """Runs Flows to quiescence on a logical clock with a seeded ready-list choice."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.ready: list[RefExecution] = []
        self.flows: dict[str, RefFlow] = {}
        self.now = 0

    def start(self, flow_id: str, step: Any, input: Any) -> None:
        """Start a Flow at ``step``."""
        flow = self.flows[flow_id] = RefFlow(flow_id)
        self._create(flow, step, input, "__start__", flow.history)

    def _create(self, flow: RefFlow, step: Any, input: Any, parent: str, buf: list[Any]) -> None:
        name = step.__name__
        number = flow.counters.get(name, 0) + 1
        flow.counters[name] = number
        ex = RefExecution(f"{name}-{number}", step, input, parent, flow)
        flow.active += 1
        buf.append((len(flow.history) + len(buf), self.now, 2, ex.execution_id, input, parent))
        if getattr(step, "wait_channel", None) is None:
            self.ready.append(ex)
        else:
            flow.waiters.setdefault(step.wait_channel, []).append(ex)
            self._offer(flow, step.wait_channel, buf)

    def _offer(self, flow: RefFlow, channel: str, buf: list[Any]) -> None:
        queue = flow.queues.get(channel)
        waiters = flow.waiters.get(channel)
        while queue and waiters:
            i = self.rng.randrange(len(waiters)) if len(waiters) > 1 else 0
            ex = waiters[i]
            need = ex.step.wait_count(ex.input)
            if len(queue) < need:
                return
            waiters[i] = waiters[-1]
            waiters.pop()
            ex.taken = [queue.popleft() for _ in range(need)]
            buf.append((0, self.now, 4, ex.execution_id, channel, need))
            self.ready.append(ex)

    def run(self) -> int:
        """Run every ready execution (seeded choice); return the number of transitions."""
        ready = self.ready
        rng = self.rng
        units = 0
        while ready:
            n = len(ready)
            i = rng.randrange(n) if n > 1 else 0
            ex = ready[i]
            ready[i] = ready[-1]
            ready.pop()
            self._transition(ex)
            units += 1
        return units

    def _transition(self, ex: RefExecution) -> None:
        flow = ex.flow
        self.now += 1
        buf: list[tuple[Any, ...]] = [(0, self.now, 0, ex.execution_id, 1)]
        ctx = RefContext(ex)
        decision = ex.step.execute(ctx, ex.input)
        buf.append((0, self.now, 1, ex.execution_id, decision))
        flow.active -= 1
        for channel, value in ctx.published:
            flow.queues.setdefault(channel, deque()).append(value)
            buf.append((0, self.now, 3, ex.execution_id, channel))
        kind = decision[0]
        if kind == NEXT:
            for step, value in decision[1]:
                self._create(flow, step, value, ex.execution_id, buf)
        elif kind == DONE:
            flow.outputs.append(decision[1])
        for channel, _ in ctx.published:
            self._offer(flow, channel, buf)
        flow.history.extend(buf)  # one commit per unit


# -- the benchmarks' Flows, written for the reference engine --------------------------------

CHAIN_LENGTH = 10


class Link:
    """One Step of a chain; the tenth completes the Flow."""

    @staticmethod
    def execute(ctx: RefContext, n: int) -> tuple[Any, ...]:
        return (NEXT, ((Link, n + 1),)) if n + 1 < CHAIN_LENGTH else (DONE, n)


class Fan:
    """Start ``width`` branches and the join."""

    @staticmethod
    def execute(ctx: RefContext, width: int) -> tuple[Any, ...]:
        return (NEXT, tuple((Branch, i) for i in range(width)) + ((Join, width),))


class Branch:
    """Report one result."""

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
