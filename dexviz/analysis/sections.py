"""Measured sections: a token holder's section as the explorer's ``exclusive`` check measures it.

A holding (``dexviz.analysis.exclusive``) ends when the holder's chain publishes the token back.
The explorer's check asks more: a chain is *inside* the Channel's section from the consume until
it has given the token back *and* its last Step has finished, so handing the token back before
the section's last Step is caught. This module measures that section from the history: the
holder's chain is the holder and every execution created from it (transitively), and the
section ends at the later of the release and the chain's last finish. A chain that never
released, or whose Steps are still running, stays inside until the run's end (its close, or the
last event of a live history, such as a counterexample stopped at the violating commit).

Endpoints compare as ``(time_ns, seq)``, as holdings do: a handover at one instant is no overlap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from dexviz.analysis.exclusive import Holding, holdings
from dexviz.analysis.executions import RunExecutions, RunSource, as_run
from dexviz.analysis.intervals import overlap_windows

__all__ = ["Section", "SectionOverlap", "SectionReport", "measured_sections"]

_Key = tuple[int, int]


@dataclass(frozen=True)
class Section:
    """One chain's stay inside a token Channel's section.

    Attributes:
        holding: The holding that opened it (its start is the section's start).
        chain: The section's executions, holder first, in creation order.
        end_ns, end_seq: When the section ended (the run's end when ``inside`` is True).
        last_step: The execution whose finish ended the section, or None when the release
            ended it (or it never ended).
        inside: True when the chain was still inside at the end of the history.
    """

    holding: Holding
    chain: tuple[str, ...]
    end_ns: int
    end_seq: int
    last_step: str | None
    inside: bool

    @property
    def holder(self) -> str:
        """The execution whose wait took the token."""
        return self.holding.holder

    @property
    def start_ns(self) -> int:
        """When the holder took the token."""
        return self.holding.start_ns

    @property
    def start_seq(self) -> int:
        """The event at which the holder took the token."""
        return self.holding.start_seq

    @property
    def outlasts_holding(self) -> bool:
        """True when the section goes on past the release (or the chain is still inside)."""
        holding = self.holding
        return self.inside or (self.end_ns, self.end_seq) > (holding.end_ns, holding.end_seq)


@dataclass(frozen=True)
class SectionOverlap:
    """Two sections of the same Channel that overlap, and the stretch where both were inside."""

    first: Section
    second: Section
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class SectionReport:
    """Every measured section of one Channel in one run, in start order, and their overlaps."""

    channel: str
    sections: tuple[Section, ...]
    overlaps: tuple[SectionOverlap, ...]

    @property
    def holders(self) -> tuple[str, ...]:
        """The holders inside the section at once with another, sorted."""
        return tuple(sorted({s.holder for o in self.overlaps for s in (o.first, o.second)}))


def _children(run: RunExecutions) -> dict[str, list[tuple[_Key, str]]]:
    """``{parent: [((created_ns, created_seq), child), ...]}`` in creation order."""
    found: dict[str, list[tuple[_Key, str]]] = defaultdict(list)
    for execution in run.values():
        if execution.parent is not None and execution.created_seq is not None:
            key = (execution.created_ns or 0, execution.created_seq)
            found[execution.parent].append((key, execution.execution_id))
    for children in found.values():
        children.sort()
    return found


def _chain(holding: Holding, children: dict[str, list[tuple[_Key, str]]]) -> list[str]:
    """The holder and every execution created from it after it took the token."""
    chain, index, seen = [holding.holder], 0, {holding.holder}
    while index < len(chain):
        for (_, seq), child in children.get(chain[index], ()):
            if seq > holding.start_seq and child not in seen:
                chain.append(child)
                seen.add(child)
        index += 1
    return chain


def _finished(run: RunExecutions, execution_id: str,
              children: dict[str, list[tuple[_Key, str]]]) -> _Key | None:
    """When the execution stopped working: its finish, or its last child's creation if later.

    A Step creates its next executions in the commit that finishes it, just after the finish
    event; until they exist the chain is still working. None: it has not finished.
    """
    execution = run.get(execution_id)
    if execution is None or execution.finished_seq is None:
        return None
    done = (execution.finished_ns or 0, execution.finished_seq)
    return max([done, *(key for key, _ in children.get(execution_id, ()))])


def _section(run: RunExecutions, holding: Holding,
             children: dict[str, list[tuple[_Key, str]]]) -> Section:
    chain = _chain(holding, children)
    ends = [(_finished(run, member, children), member) for member in chain]
    if holding.end in ("closed", "open") or any(key is None for key, _ in ends):
        return Section(holding, tuple(chain), run.end_ns, _run_end_seq(run), None, True)
    release = (holding.end_ns, holding.end_seq)
    (last, member) = max((key, m) for key, m in ends if key is not None)
    if last <= release:
        return Section(holding, tuple(chain), release[0], release[1], None, False)
    return Section(holding, tuple(chain), last[0], last[1], member, False)


def _run_end_seq(run: RunExecutions) -> int:
    if run.close is not None:
        return run.close.seq
    return (run.events[-1].seq if run.events else 0) + 1


def _overlaps(sections: Sequence[Section]) -> tuple[SectionOverlap, ...]:
    return tuple(SectionOverlap(*window) for window in overlap_windows(sections))


def measured_sections(
    source: RunSource, channel: str, *, run_id: str | None = None
) -> SectionReport:
    """Measure every section of token Channel ``channel`` in one run (see the module doc).

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        channel: The physical Channel name, e.g. ``"contractEditToken"``.
        run_id: The run to measure when ``source`` is a History.

    Raises:
        ValueError: the Flow's recorded spec declares no Channel ``channel``.
    """
    run = as_run(source, run_id)
    children = _children(run)
    sections = tuple(_section(run, h, children) for h in holdings(run, channel))
    return SectionReport(channel, sections, _overlaps(sections))
