"""Sampling strategies for Flows too large to exhaust: ``"random"`` walks and ``"pct"``.

``"random"`` makes every choice uniformly from a seeded source. ``"pct"`` is probabilistic
concurrency testing (Burckhardt et al., ASPLOS 2010): each unit gets a random priority when it is
first seen, the highest-priority ready unit runs, and at ``depth - 1`` random steps the running
unit's priority drops below all others. A bug that needs ``depth`` ordering constraints is found
by one schedule with probability at least ``1 / (n * k ** (depth - 1))`` for ``n`` units and
``k`` steps; the report states that bound for the numbers measured.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dexviz.explore.schedule_records import Option, StepRecord


class RandomPolicy:
    """Uniform choices from a seeded random source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """A uniform pick."""
        return self.rng.randrange(len(options))

    def stepped(self, step: StepRecord) -> None:
        """Nothing to remember."""
        del step


class PctPolicy:
    """PCT priorities over units (and actions); waiter and fault choices are uniform."""

    def __init__(self, rng: random.Random, depth: int, steps: int) -> None:
        self.rng = rng
        self.priority: dict[Option, float] = {}
        self.change_points = set(rng.sample(range(max(steps, depth)), max(depth - 1, 0)))
        self.lowered = 0
        self.step = 0

    def _priority(self, option: Option) -> float:
        found = self.priority.get(option)
        if found is None:
            found = 1000.0 + float(self.rng.random())
            self.priority[option] = found
        return found

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """The ready option of highest priority; waiter and fault choices are uniform."""
        if kind != "ready":
            return self.rng.randrange(len(options))
        return max(range(len(options)), key=lambda i: self._priority(options[i]))

    def stepped(self, step: StepRecord) -> None:
        """At a change point, drop the unit that just ran below every other."""
        if self.step in self.change_points:
            self.lowered += 1
            self.priority[step.name] = -float(self.lowered)
        self.step += 1


@dataclass(frozen=True)
class PctBound:
    """PCT's guarantee for the numbers an exploration measured."""

    depth: int
    units: int
    steps: int
    schedules: int

    @property
    def per_schedule(self) -> float:
        """Lower bound on the chance one schedule finds a bug of this depth."""
        return 1.0 / float(max(self.units, 1) * max(self.steps, 1) ** (self.depth - 1))

    @property
    def overall(self) -> float:
        """Lower bound on the chance that some schedule of the run found it."""
        return 1.0 - (1.0 - self.per_schedule) ** self.schedules

    def __str__(self) -> str:
        return (
            f"PCT depth {self.depth}: each schedule finds a depth-{self.depth} bug with "
            f"probability >= 1/(n*k^{self.depth - 1}) = {self.per_schedule:.3g} "
            f"(n={self.units} units, k={self.steps} steps); {self.schedules} schedules: "
            f">= {self.overall:.3g}"
        )
