"""Lassos: a liveness counterexample as a prefix of steps and a loop the run repeats forever.

The fair cycle a liveness search finds (``explore.fairness``) is a walk in a graph of states
compared up to execution numbering and a shift in time. ``resolve`` turns it into concrete
choices: from the loop's first state (reached by the prefix), each step of the loop is found
again among the steps the concrete state offers (the same option, leading to the same state),
twice around. The result is one trace that ``explore.violation.replay`` re-runs from the start
in a fresh engine: the prefix, then the loop two times, each time back at the state it started
from (``explore.liveness.loop_keys`` re-runs it and returns that state's key at each round, which
is how a test, or a doubting user, checks that the loop really closes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dexviz.explore.schedule_records import ChoiceRecord
from dexviz.explore.state_driver import Driver, Point, Transition
from dexviz.explore.state_graph import Edge, Node

__all__ = ["LOOPS", "Lasso", "LassoError", "resolve"]

LOOPS = 2
"""How many times the concrete trace goes around the loop."""


class LassoError(RuntimeError):
    """A loop of the state graph could not be followed in a concrete run."""


@dataclass(frozen=True)
class Lasso:
    """A prefix of steps, then a loop of steps that comes back to the loop's first state.

    Attributes:
        prefix: One label per step from the start to the loop's first state.
        loop: One label per step of the loop (once around).
        prefix_choices: How many choices of the trace the prefix takes.
        loop_choices: How many choices each time around the loop takes (one per round).
    """

    prefix: tuple[str, ...]
    loop: tuple[str, ...]
    prefix_choices: int
    loop_choices: tuple[int, ...]

    @property
    def rounds(self) -> int:
        """How many times the trace goes around the loop."""
        return len(self.loop_choices)

    @property
    def steps(self) -> int:
        """Steps the whole trace runs: the prefix and every round of the loop."""
        return len(self.prefix) + self.rounds * len(self.loop)

    def text(self, check: str, message: str) -> str:
        """The counterexample as the report prints it: ``prefix …`` then ``loop …``."""
        lines = [f"VIOLATED {check}: {message}",
                 f"  lasso: prefix {len(self.prefix)} steps / loop {len(self.loop)} steps "
                 "(repeats forever)", "  prefix:"]  # fmt: skip
        lines.extend(f"  {i:>3}. {label}" for i, label in enumerate(self.prefix, 1))
        lines.append("  loop:")
        lines.extend(f"  {i:>3}. {label}" for i, label in enumerate(self.loop, 1))
        return "\n".join(lines)


def resolve(
    driver: Driver,
    nodes: Sequence[Node],
    prefix: Sequence[Edge],
    loop: Sequence[Edge],
    start: int,
) -> tuple[list[ChoiceRecord], list[int]]:
    """The concrete choices of the prefix and of ``LOOPS`` rounds of the loop, and per round.

    Returns every choice record in order, and how many choices each round took.
    """
    records = [c for edge in prefix for c in edge.choices]
    point = nodes[start].point
    rounds: list[int] = []
    known, driver.known = driver.known, (lambda key: False)
    try:
        for _ in range(LOOPS):
            taken = 0
            for edge in loop:
                transition = _follow(driver, point, edge, nodes[edge.target])
                records.extend(transition.choices)
                taken += len(transition.choices)
                point = transition.point
            rounds.append(taken)
    finally:
        driver.known = known
    return records, rounds


def _follow(driver: Driver, point: Point, edge: Edge, target: Node) -> Transition:
    """The step out of the concrete ``point`` that does what ``edge`` did."""
    _, transitions = driver.expand(point)
    for transition in transitions:
        same = (transition.key == target.key if target.key is not None
                else transition.label == edge.label)  # fmt: skip
        if same and transition.option == edge.option:
            return transition
    raise LassoError(
        f"the loop step {edge.label!r} has no concrete counterpart: the Flow's handlers may "
        "depend on execution numbers or on the absolute clock, which liveness states ignore"
    )
