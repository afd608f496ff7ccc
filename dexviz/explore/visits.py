"""Visited states: which states an exhaustive search may stop at, and what ran below them.

A state (``explore.fingerprint``) is *complete* once the search has explored everything below
it. A later schedule that reaches a complete state stops there ("pruned"): its future was
explored already. Three things keep that sound:

- the depth bound: a state explored with schedules cut at ``max_depth`` is pruned only when
  reached at the same step or later (the earlier visit explored at least as far);
- sleep sets (``"dpor"``): the earlier visit did not explore the options asleep there, so the
  state is pruned only when every one of them is asleep now too (Godefroid's condition); two
  visits of one state keep the options asleep in both;
- backtrack points (``"dpor"``): below the state ran steps that may race with steps of the new
  path to it, and DPOR adds a backtrack point for each race. A *summary* of the footprints run
  below each state (split by virtual instant, as the happens-before order is) stands in for
  them: every step of the new path that may race with the summary gets all its options back
  (Yang et al., "Efficient Stateful Dynamic Partial Order Reduction", 2008, conservatively).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dexviz.explore.footprint import Footprint
from dexviz.explore.schedule_records import StepRecord


@dataclass
class Summary:
    """The footprints of every step run below one state, split the way races are found."""

    now_ns: int
    same: Footprint = field(default_factory=Footprint.empty)
    later: Footprint = field(default_factory=Footprint.empty)
    actions: Footprint = field(default_factory=Footprint.empty)

    def add_step(self, step: StepRecord) -> None:
        """Count a step run below the state."""
        if step.first_seen < 0:
            self.actions = self.actions | step.footprint
        elif step.time_ns == self.now_ns:
            self.same = self.same | step.footprint
        else:
            self.later = self.later | step.footprint

    def add(self, other: Summary) -> None:
        """Count everything below ``other``, a state below this one."""
        self.actions = self.actions | other.actions
        if other.now_ns == self.now_ns:
            self.same = self.same | other.same
            self.later = self.later | other.later
        else:
            self.later = self.later | other.same | other.later

    def races(self, step: StepRecord) -> bool:
        """Whether ``step``, run on a path to the state, may race with a step below it.

        A unit step at an earlier instant happens before every unit step below (the time
        barrier); a client action is ordered by nothing but dependence.
        """
        if step.first_seen < 0:
            others = self.same | self.later | self.actions
        elif step.time_ns == self.now_ns:
            others = self.same | self.actions
        else:
            others = self.actions
        return step.footprint.depends_on(others)


@dataclass
class Visit:
    """One state reached by the search: where, with which options asleep, and what ran below."""

    key: str
    index: int
    position: int
    asleep: frozenset[str]
    summary: Summary
    depth_cut: bool = False

    def covers(self, index: int, asleep: frozenset[str]) -> bool:
        """Whether this complete visit explored everything a new visit would."""
        deep_enough = not self.depth_cut or index >= self.index
        return deep_enough and self.asleep <= asleep

    def merge(self, other: Visit) -> None:
        """Fold another complete visit of the same state into this one."""
        self.asleep = self.asleep & other.asleep
        self.summary.add(other.summary)
        if other.depth_cut:
            self.depth_cut, self.index = True, max(self.index, other.index)


@dataclass
class Visits:
    """The complete states, and the open ones on the current path (outermost first)."""

    complete: dict[str, Visit] = field(default_factory=dict)
    open: list[Visit] = field(default_factory=list)
    pruned: int = 0

    def on_path(self, index: int) -> bool:
        """Whether the state after step ``index`` is an open visit (a replayed prefix)."""
        return any(v.index == index for v in reversed(self.open))

    def hit(self, key: str, index: int, asleep: frozenset[str]) -> Visit | None:
        """The complete visit that makes the state after step ``index`` redundant, if any."""
        found = self.complete.get(key)
        return found if found is not None and found.covers(index, asleep) else None

    def enter(self, visit: Visit) -> None:
        """Open a visit: the search goes on below the state."""
        self.open.append(visit)

    def schedule_ran(self, steps: list[StepRecord], stopped_at: Visit | None, cut: bool) -> None:
        """Add a schedule's steps (and a pruned state's summary) to the open visits above them."""
        for visit in self.open:
            summary = visit.summary
            for step in steps[visit.index + 1 :]:
                summary.add_step(step)
            if stopped_at is not None:
                summary.add(stopped_at.summary)
            visit.depth_cut = visit.depth_cut or cut

    def close_below(self, position: int) -> None:
        """Complete the open visits whose subtree lies at choice ``position`` or deeper."""
        while self.open and self.open[-1].position >= position:
            visit = self.open.pop()
            known = self.complete.get(visit.key)
            if known is None:
                self.complete[visit.key] = visit
            else:
                known.merge(visit)
