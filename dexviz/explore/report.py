"""ExplorationReport: what an exploration ran, what it proved, and the state graph it saw."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dexviz.explore.randomized import PctBound
from dexviz.explore.violation import Violation
from dexviz.history._plural import plural

GRAPH_LIMIT = 2_000
"""The state graph is drawn only for state spaces up to this many states."""


@dataclass
class StateGraph:
    """The canonical states met and the steps between them (violating states in red)."""

    statuses: dict[str, str] = field(default_factory=dict)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)
    violating: set[str] = field(default_factory=set)
    initial: set[str] = field(default_factory=set)

    def add_path(self, start: str, steps: Iterable[tuple[str, str, str]]) -> None:
        """Record a schedule: its first state and each (state, status, label) after a step."""
        self.initial.add(start)
        self.statuses.setdefault(start, "RUNNING")
        before = start
        for state, status, label in steps:
            self.statuses.setdefault(state, status)
            if before != state:
                self.edges.setdefault((before, state), label)
            before = state

    def to_dot(self) -> str:
        """The graph as DOT: one node per state, initial states boxed, violations red."""
        ids = {state: f"s{i}" for i, state in enumerate(sorted(self.statuses))}
        lines = ["digraph states {", "  rankdir=TB;",
                 '  node [shape=circle, label="", width=0.18, style=filled, fillcolor="#9aa5b1"];',
                 '  edge [color="#9aa5b1", arrowsize=0.5];']
        for state in sorted(self.statuses):
            attrs = _node_attrs(state, self.statuses[state], state in self.violating,
                                state in self.initial)
            lines.append(f"  {ids[state]} [{attrs}];")
        for (a, b), label in sorted(self.edges.items()):
            lines.append(f'  {ids[a]} -> {ids[b]} [tooltip="{_escape(label)}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __len__(self) -> int:
        return len(self.statuses)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _node_attrs(state: str, status: str, violating: bool, initial: bool) -> str:
    color = "#d64545" if violating else ("#3f9142" if status == "COMPLETED" else "#9aa5b1")
    if status not in ("RUNNING", "COMPLETED") and not violating:
        color = "#e0a030"
    shape = ", shape=box" if initial else ""
    return f'fillcolor="{color}", tooltip="{state[:10]} {status}"{shape}'


@dataclass(frozen=True)
class StatefulCounts:
    """What a stateful search (``strategy="stateful"``) counted besides the common fields.

    Attributes:
        expanded: Distinct states (by fingerprint) expanded, each once.
        transitions: Steps run out of expanded states (one replay each).
        merged: Transitions that reached a state already seen (pruned by the seen-set).
        depth: The deepest breadth-first level reached (steps from the start).
        workers: Processes (or cluster workers) that expanded the levels.
        reductions: The reductions applied, by name.
        transitions_per_s: Transitions per wall-clock second.
        peak_rss_mb: This process's peak resident memory, in MiB.
    """

    expanded: int
    transitions: int
    merged: int
    depth: int
    workers: int
    reductions: tuple[str, ...]
    transitions_per_s: float
    peak_rss_mb: float


@dataclass(frozen=True)
class ExplorationReport:
    """The outcome of ``dexviz.explore``.

    Attributes:
        strategy: ``"dfs"``, ``"dpor"``, ``"stateful"``, ``"pct"`` or ``"random"``.
        schedules: How many schedules ran (each a fresh simulation).
        distinct_states: How many canonical states they reached (see ``explore.state_key``).
        pruned: Branches the reduction proved redundant and never ran (each a subtree of
            one or more schedules), plus schedules stopped early by a sleep set.
        exhaustive: True when the search covered every schedule within its bounds (dfs and
            dpor only, and no ``max_schedules``, ``time_budget`` or violation stopped it early);
            ``depth_bounded`` says whether ``max_depth`` cut schedules short.
        wall_time_s: Seconds the exploration took, shrinking included.
        violations: Each violated check with its shortest trace found.
        terminal_states: The canonical states of the schedules that ran out of work.
        bound: PCT's probability bound (``"pct"`` only).
        stopped_by: Why the search ended early (``max_schedules``, ``time_budget``,
            ``violation``), or None.
        depth_bounded: Schedules cut at ``max_depth``.
        states_pruned: Schedules stopped at a state already explored (``prune=True``, the
            default of ``"dfs"`` and ``"dpor"``; for ``"stateful"``, transitions to a state
            already seen); None when state pruning was off.
        stateful: The stateful search's own counts (``"stateful"`` only).
    """

    strategy: str
    schedules: int
    distinct_states: int
    pruned: int
    exhaustive: bool
    wall_time_s: float
    violations: tuple[Violation, ...]
    terminal_states: frozenset[str]
    checks: tuple[str, ...]
    bound: PctBound | None = None
    stopped_by: str | None = None
    depth_bounded: int = 0
    graph: StateGraph | None = field(default=None, repr=False, compare=False)
    states_pruned: int | None = None
    stateful: StatefulCounts | None = None

    @property
    def ok(self) -> bool:
        """True when no check was violated."""
        return not self.violations

    @property
    def proven(self) -> bool:
        """True when the checks hold in every schedule, none of them cut by ``max_depth``."""
        return self.ok and self.exhaustive and not self.depth_bounded

    def summary(self) -> Mapping[str, Any]:
        """The counts as a plain mapping (for tables and JSON)."""
        return {
            "strategy": self.strategy,
            "schedules": self.schedules,
            "distinct_states": self.distinct_states,
            "pruned": self.pruned,
            "states_pruned": self.states_pruned,
            "terminal_states": len(self.terminal_states),
            "exhaustive": self.exhaustive,
            "violations": len(self.violations),
            "wall_time_s": round(self.wall_time_s, 3),
            **self._stateful_summary(),
        }

    def _stateful_summary(self) -> dict[str, Any]:
        counts = self.stateful
        if counts is None:
            return {}
        return {
            "states_expanded": counts.expanded, "transitions": counts.transitions,
            "depth": counts.depth, "transitions_per_s": counts.transitions_per_s,
            "workers": counts.workers, "peak_rss_mb": counts.peak_rss_mb,
            "reductions": "; ".join(counts.reductions),
        }

    def verdict(self) -> str:
        """One line: proven, violated, or no violation found in a partial search."""
        checks = ", ".join(self.checks) or "no checks"
        if self.violations:
            return f"VIOLATED {self.violations[0].check}: {self.violations[0].message}"
        if self.proven:
            return f"PROVEN {checks} for every schedule ({self.schedules} run)"
        if self.exhaustive:
            return (f"no violation of {checks} in any schedule up to max_depth steps "
                    f"({self.depth_bounded} of {self.schedules} cut there); not a proof")
        why = f" (stopped by {self.stopped_by})" if self.stopped_by else ""
        return f"no violation of {checks} in {self.schedules} schedules{why}; not exhaustive"

    def counts(self) -> str:
        """One line: schedules run and states pruned, e.g. ``21 schedules run, 1 state pruned``."""
        ran = f"{plural(self.schedules, 'schedule')} run"
        if self.states_pruned is None:
            return f"{ran} (state pruning off)" if self.strategy in ("dfs", "dpor") else ran
        return f"{ran}, {plural(self.states_pruned, 'state')} pruned"

    def __str__(self) -> str:
        lines = [] if self.violations else [self.verdict()]
        lines.append(self.counts())
        lines.append(", ".join(f"{k}={v}" for k, v in self.summary().items()))
        if self.bound is not None:
            lines.append(str(self.bound))
        lines.extend(str(v) for v in self.violations)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"ExplorationReport(strategy={self.strategy!r}, schedules={self.schedules}, "
                f"distinct_states={self.distinct_states}, pruned={self.pruned}, "
                f"exhaustive={self.exhaustive}, violations={len(self.violations)})")

    def graph_svg(self) -> str | None:
        """The state graph as SVG (None above GRAPH_LIMIT states or without Graphviz)."""
        if self.graph is None or len(self.graph) > GRAPH_LIMIT:
            return None
        try:
            from dexviz.viz.render import render

            return render(self.graph.to_dot(), "svg").decode("utf-8")
        except Exception:  # noqa: BLE001 - no graphviz: the counts still show
            return None

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
            f"<td>{html.escape(str(v))}</td></tr>"
            for k, v in self.summary().items()
        )
        parts = [f"<p><b>{html.escape(self.verdict())}</b></p>",
                 f"<p>{html.escape(self.counts())}</p>", f"<table>{rows}</table>"]
        if self.bound is not None:
            parts.append(f"<p>{html.escape(str(self.bound))}</p>")
        for violation in self.violations:
            parts.append(f"<pre>{html.escape(str(violation))}</pre>")
        svg = self.graph_svg()
        if svg is not None:
            parts.append(f"<div>{svg[svg.find('<svg'):]}</div>")
        return "<div class='dexviz-exploration'>" + "".join(parts) + "</div>"
