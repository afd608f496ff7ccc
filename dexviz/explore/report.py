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
"""Above this many states the state graph is drawn collapsed: one node per depth and status."""
GRAPH_KEEP = 200_000
"""Above this many states no state graph is kept at all (its memory would rival the search's)."""


@dataclass
class StateGraph:
    """The canonical states met and the steps between them (violating states in red)."""

    statuses: dict[str, str] = field(default_factory=dict)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)
    violating: set[str] = field(default_factory=set)
    initial: set[str] = field(default_factory=set)
    depths: dict[str, int] = field(default_factory=dict)
    grouped: bool = False

    def add_path(self, start: str, steps: Iterable[tuple[str, str, str]]) -> None:
        """Record a schedule: its first state and each (state, status, label) after a step."""
        self.initial.add(start)
        self.statuses.setdefault(start, "RUNNING")
        self.depths.setdefault(start, 0)
        before = start
        for depth, (state, status, label) in enumerate(steps, 1):
            self.statuses.setdefault(state, status)
            self.depths.setdefault(state, depth)
            if before != state:
                self.edges.setdefault((before, state), label)
            before = state

    def to_dot(self) -> str:
        """The graph as DOT: one labelled node per state, initial ringed, violations red.

        A node is labelled with its status and the step that first reached it; above
        ``GRAPH_LIMIT`` states the graph is collapsed (``collapsed``).
        """
        if len(self) > GRAPH_LIMIT and not self.grouped:
            return self.collapsed().to_dot()
        ids = {state: f"s{i}" for i, state in enumerate(sorted(self.statuses))}
        lines = [
            "digraph states {",
            "  rankdir=TB;",
            '  node [shape=box, style="rounded,filled", fontsize=9, fillcolor="#9aa5b1"];',
            '  edge [color="#9aa5b1", arrowsize=0.5, fontsize=8];',
        ]
        reached = {b: label for (_, b), label in sorted(self.edges.items(), reverse=True)}
        for state in sorted(self.statuses):
            attrs = _node_attrs(
                state, self.statuses[state], state in self.violating, state in self.initial
            )
            label = state if self.grouped else _node_label(
                self.statuses[state], reached.get(state), state in self.initial
            )
            lines.append(f'  {ids[state]} [{attrs}, label="{_escape(label)}"];')
        for (a, b), label in sorted(self.edges.items()):
            lines.append(f'  {ids[a]} -> {ids[b]} [tooltip="{_escape(label)}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __len__(self) -> int:
        return len(self.statuses)

    def collapsed(self) -> StateGraph:
        """One node per (depth, status, violating), labelled with how many states it holds."""
        group: dict[str, str] = {}
        counts: dict[str, int] = {}
        # Depths in bands when there are many: a few hundred nodes at most.
        band = max(1, -(-max(self.depths.values(), default=0) // 200))
        for state, status in self.statuses.items():
            bad = " VIOLATED" if state in self.violating else ""
            low = self.depths.get(state, 0) // band * band
            depth = f"{low}" if band == 1 else f"{low}-{low + band - 1}"
            name = group[state] = f"depth {depth}: {status}{bad}"
            counts[name] = counts.get(name, 0) + 1
        out = StateGraph(grouped=True)
        for state, name in group.items():
            label = group[state] = f"{name} ({plural(counts[name], 'state')})"
            out.statuses.setdefault(label, self.statuses[state])
            out.depths.setdefault(label, self.depths.get(state, 0))
            if state in self.violating:
                out.violating.add(label)
            if state in self.initial:
                out.initial.add(label)
        for (a, b), step in self.edges.items():
            if group[a] != group[b]:
                out.edges.setdefault((group[a], group[b]), step)
        return out


def _node_label(status: str, reached_by: str | None, initial: bool) -> str:
    """A state's label: its status and the step that reached it (a collapsed node: its name)."""
    if initial:
        return f"start\n{status}"
    step = (reached_by or "").split(" (")[0]
    return f"{status}\n{step[:32]}" if step else status


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _node_attrs(state: str, status: str, violating: bool, initial: bool) -> str:
    color = "#d64545" if violating else ("#3f9142" if status == "COMPLETED" else "#9aa5b1")
    if status not in ("RUNNING", "COMPLETED") and not violating:
        color = "#e0a030"
    shape = ", peripheries=2" if initial else ""
    return f'fillcolor="{color}", tooltip="{state[:10]} {status}"{shape}'


@dataclass(frozen=True)
class StatefulCounts:
    """What a stateful search (``strategy="stateful"``) counted besides the common fields.

    Attributes:
        expanded: Distinct states (by canonical fingerprint) expanded, each once.
        transitions: Steps run out of expanded states.
        states_pruned: Transitions that reached a state already seen, so not expanded again.
        depth: The deepest breadth-first level reached (steps from the start).
        workers: Processes (or cluster workers) that expanded the levels.
        reductions: The reductions applied, by name.
        transitions_per_s: Transitions per wall-clock second.
        peak_rss_mb: This process's peak resident memory, in MiB.
        pruned_by: ``states_pruned`` by the reduction that merged them: "seen-set" (the same
            state exactly), "canonical numbering" (the same but for execution numbers),
            "symmetry" (the same but for a permutation of a declared group).
        states_per_s: Distinct states expanded per wall-clock second.
        frontier: States waiting to be expanded when the search ended.
    """

    expanded: int
    transitions: int
    states_pruned: int
    depth: int
    workers: int
    reductions: tuple[str, ...]
    transitions_per_s: float
    peak_rss_mb: float
    pruned_by: tuple[tuple[str, int], ...] = ()
    states_per_s: float = 0.0
    frontier: int = 0


@dataclass(frozen=True)
class ExplorationReport:
    """The outcome of ``dexviz.explore``.

    Attributes:
        strategy: ``"dfs"``, ``"dpor"``, ``"stateful"``, ``"pct"`` or ``"random"``.
        schedules: How many schedules ran (each a fresh simulation).
        distinct_states: How many canonical states they reached (see ``explore.state_key``).
        pruned: Branches the reduction skipped (shown as ``branches_skipped``): subtrees of
            one or more schedules dpor proved redundant and never ran, plus schedules stopped
            early by a sleep set. Not "states pruned" (``states_pruned``).
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
            "branches_skipped": self.pruned,
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
        by = {f"states_pruned_by_{k.replace(' ', '_').replace('-', '_')}": n
              for k, n in counts.pruned_by}  # fmt: skip
        return {
            "states_expanded": counts.expanded,
            "transitions": counts.transitions,
            **by,
            "depth": counts.depth,
            "states_per_s": counts.states_per_s,
            "transitions_per_s": counts.transitions_per_s,
            "frontier": counts.frontier,
            "workers": counts.workers,
            "peak_rss_mb": counts.peak_rss_mb,
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
                f"distinct_states={self.distinct_states}, states_pruned={self.states_pruned}, "
                f"branches_skipped={self.pruned}, exhaustive={self.exhaustive}, "
                f"violations={len(self.violations)})")

    def graph_svg(self) -> str | None:
        """The state graph as SVG, collapsed above GRAPH_LIMIT states.

        None without Graphviz, or without a graph (above GRAPH_KEEP states).
        """
        if self.graph is None:
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
            parts.append(_graph_block(svg[svg.find("<svg") :], self.graph))
        return "<div class='dexviz-exploration'>" + "".join(parts) + "</div>"


def _graph_block(svg: str, graph: StateGraph | None) -> str:
    """The state graph in a ``<details>`` block: open when small, collapsed above the limit."""
    size = 0 if graph is None else len(graph)
    large = size > GRAPH_LIMIT
    title = (f"state graph: {plural(size, 'state')}, collapsed to one node per depth and "
             f"status (more than {GRAPH_LIMIT:,})" if large else
             f"state graph: {plural(size, 'state')}")  # fmt: skip
    return (f"<details{'' if large else ' open'}><summary>{html.escape(title)}</summary>"
            f"<div>{svg}</div></details>")  # fmt: skip
