"""Counterexamples: a violated check with its choice trace, shrunk, and replayable.

A trace is the list of option indices a schedule took at its choice points. Replaying it in a
fresh engine reproduces the schedule (past its end, first options are taken; an index too
large for the options met wraps around, so every list of numbers is a valid trace — which is
what lets delta debugging cut pieces out). ``shrink`` runs ddmin over the trace, keeping a
candidate when it violates the same check in fewer steps (then fewer choices, then fewer
non-first choices), so the counterexample is the shortest the search could find.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dexviz.engine.simulate import SimulationRun
from dexviz.explore.schedule import clock, run_schedule
from dexviz.explore.schedule_records import (
    ChoiceRecord,
    Found,
    Option,
    ScheduleResult,
    Setup,
    StepRecord,
)

if TYPE_CHECKING:
    from dexviz.explore.lasso import Lasso


class ReplayPolicy:
    """Takes the trace's choices in order (wrapping indices), then first options."""

    def __init__(self, trace: tuple[int, ...] | list[int]) -> None:
        self.trace = tuple(trace)
        self.position = 0

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """The trace's next index, wrapped to the options; the first option past its end."""
        position = self.position
        self.position += 1
        if position < len(self.trace):
            return self.trace[position] % len(options)
        return 0

    def stepped(self, step: StepRecord) -> None:
        """Nothing to remember."""
        del step


def replay(setup: Setup, trace: tuple[int, ...], *, keep_engine: bool = False) -> ScheduleResult:
    """Run the schedule that ``trace`` describes."""
    return run_schedule(setup, ReplayPolicy(trace), keep_engine=keep_engine)


def _size(result: ScheduleResult) -> tuple[int, int, int]:
    trace = result.trace
    return (len(result.steps), len(trace), sum(1 for c in trace if c))


class _Shrinker:
    """Keeps the smallest violating schedule met so far and counts the replays."""

    def __init__(self, setup: Setup, result: ScheduleResult, deadline: float, limit: int) -> None:
        assert result.found is not None
        self.setup, self.check, self.best = setup, result.found.check, result
        self.deadline, self.limit, self.tests = deadline, limit, 0

    def attempt(self, candidate: list[int]) -> bool:
        """Replay ``candidate``; keep it when it violates the same check in a smaller run."""
        self.tests += 1
        found = replay(self.setup, tuple(candidate))
        if found.found is not None and found.found.check == self.check:
            if _size(found) < _size(self.best):
                self.best = found
                return True
        return False

    def spent(self) -> bool:
        """Whether the replay count or the time is used up."""
        return self.tests >= self.limit or clock() > self.deadline

    def ddmin(self) -> None:
        """Cut ever smaller chunks out of the trace while the violation stays."""
        chunks = 2
        while len(self.best.trace) >= 2 and not self.spent():
            trace = list(self.best.trace)
            size = max(1, -(-len(trace) // chunks))
            cuts = (trace[:start] + trace[start + size :] for start in range(0, len(trace), size))
            if any(self.attempt(cut) for cut in cuts if not self.spent()):
                chunks = max(chunks - 1, 2)
            elif chunks >= len(trace):
                return
            else:
                chunks = min(chunks * 2, len(trace))

    def simplify(self) -> None:
        """Try the first option instead of each other one."""
        position = 0
        while position < len(self.best.trace) and not self.spent():
            trace = list(self.best.trace)
            if trace[position]:
                trace[position] = 0
                self.attempt(trace)
            position += 1


def shrink(
    setup: Setup, result: ScheduleResult, *, deadline: float, max_tests: int = 400
) -> tuple[ScheduleResult, int]:
    """The smallest schedule found by ddmin that violates ``result``'s check; and tests run."""
    shrinker = _Shrinker(setup, result, deadline, max_tests)
    shrinker.ddmin()
    shrinker.simplify()
    return shrinker.best, shrinker.tests


@dataclass(frozen=True)
class Violation:
    """A check that failed in some schedule, with the (shrunk) choices that make it fail.

    Attributes:
        check: The check's name, e.g. ``exclusive(contractEditToken)``.
        message: What the check saw.
        trace: The option index taken at each choice point (``replay`` takes this).
        choices: Each choice with its kind, option count and the option taken.
        steps: One line per step of the schedule up to the violation.
        found_after: How many steps the first violating schedule had before shrinking.
        shrink_tests: How many replays shrinking took.
        lasso: For a liveness violation that loops forever, the prefix and the loop (the
            trace runs the prefix, then the loop twice); None otherwise.
    """

    check: str
    message: str
    trace: tuple[int, ...]
    choices: tuple[ChoiceRecord, ...]
    steps: tuple[str, ...]
    found_after: int
    shrink_tests: int
    setup: Setup
    lasso: Lasso | None = None

    @property
    def channel(self) -> str | None:
        """The Channel the failing check measured (``exclusive``/``conserved``), else None."""
        for check in self.setup.checks:
            if check.name == self.check:
                channel = getattr(check, "channel", None)
                return channel if isinstance(channel, str) else None
        return None

    @classmethod
    def of(cls, setup: Setup, result: ScheduleResult, found_after: int, tests: int) -> Violation:
        """The violation of a schedule that violated a check."""
        found = result.found
        assert found is not None
        steps = tuple(s.label for s in result.steps)
        return cls(found.check, found.message, result.trace, tuple(result.choices), steps,
                   found_after, tests, setup)

    def replay(self) -> ViolationRun:
        """Re-run the schedule up to the violating commit, in a fresh engine you can inspect."""
        if self.lasso is not None:
            return self._replay_lasso(self.lasso)
        result = replay(self.setup, self.trace, keep_engine=True)
        engine = result.engine
        assert engine is not None and result.found is not None
        flow_id = self.setup.flow_id
        history = engine.history(flow_id)
        first, last = _violating_seqs(result, result.found)
        return ViolationRun(engine.result(flow_id), history, engine, flow_id, self, first, last)

    def _replay_lasso(self, lasso: Lasso) -> ViolationRun:
        """Re-run the prefix and the loop's rounds; the violating commit is the loop's first."""
        result = replay(dataclasses.replace(self.setup, max_depth=lasso.steps), self.trace,
                        keep_engine=True)  # fmt: skip
        engine = result.engine
        assert engine is not None
        history = engine.history(self.setup.flow_id)
        loop = result.steps[len(lasso.prefix) :]
        first = next((e.seq for s in loop for e in s.events), history[-1].seq)
        flow_id = self.setup.flow_id
        return ViolationRun(engine.result(flow_id), history, engine, flow_id, self, first, first)

    def __str__(self) -> str:
        if self.lasso is not None:
            return self.lasso.text(self.check, self.message)
        lines = [f"VIOLATED {self.check}: {self.message}",
                 f"  shortest trace: {len(self.steps)} steps, {len(self.trace)} choices "
                 f"(first found after {self.found_after} steps)"]
        lines.extend(f"  {i:>3}. {line}" for i, line in enumerate(self.steps, 1))
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.lasso is not None:
            return (f"Violation({self.check}, prefix={len(self.lasso.prefix)} steps / "
                    f"loop={len(self.lasso.loop)} steps, message={self.message!r})")
        return (f"Violation({self.check}, steps={len(self.steps)}, "
                f"choices={len(self.trace)}, message={self.message!r})")


def _violating_seqs(result: ScheduleResult, found: Found) -> tuple[int, int]:
    """The first and last sequence numbers of the violating commit's events."""
    if 0 <= found.step < len(result.steps):
        events = result.steps[found.step].events
        if events:
            return events[0].seq, events[-1].seq
    return 1, 1


@dataclass(frozen=True, repr=False)
class ViolationRun(SimulationRun):
    """A replayed counterexample: a SimulationRun stopped at the violating commit.

    ``violating_seq`` and ``violating_last_seq`` are the sequence numbers of the violating
    commit's first and last events; ``debugger()`` opens the Debugger after that commit, with a
    breakpoint on it and the checked Channel as its token lane (displaying the run in a
    notebook does the same).
    """

    violation: Violation | None = None
    violating_seq: int = 1
    violating_last_seq: int | None = None
    """The last event of the violating commit (None: the commit's first event stands for it)."""

    def debugger(self, **options: Any) -> Any:
        """A Debugger over this history, where the violation is visible.

        The cursor stands on the violating commit's last event (its effects applied), with a
        breakpoint on the commit, and the checked Channel (of ``exclusive``/``conserved``) is
        the timeline's token lane unless ``token_channel=`` says otherwise.
        """
        from dexviz.widgets.debugger import Debugger

        channel = self.violation.channel if self.violation is not None else None
        if channel is not None:
            options.setdefault("token_channel", channel)
        debugger = Debugger(self, **options)
        seq = self.violating_seq
        debugger.add_breakpoint(lambda event: event.seq == seq)
        last = self.violating_last_seq or seq
        debugger.seek(max(i for i, e in enumerate(self.history) if seq <= e.seq <= last))
        return debugger

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """In a notebook the counterexample opens in the Debugger, at the violating commit."""
        try:
            bundle = self.debugger()._repr_mimebundle_(include=include, exclude=exclude)
        except ImportError:
            bundle = {"text/html": self._repr_html_()}
        bundle["text/plain"] = repr(self)
        return dict(bundle)

    def __repr__(self) -> str:
        check = self.violation.check if self.violation else "?"
        return (f"ViolationRun(flow_id={self.flow_id!r}, check={check}, "
                f"violating_seq={self.violating_seq}, events={len(self.history)})")
