"""Compare mode: a second replay that follows the first one's cursor to the aligned event.

``Paired`` holds run b's :class:`~dexviz.replay.session.Replay` and the two runs'
:class:`~dexviz.viz.diff_view.RunDiff`. When run a's cursor moves, ``follow`` moves run b's to
the aligned event (``RunDiff.aligned_event``, or the nearest aligned one before it);
``compare_html`` draws both states side by side, the differing executions and the difference
of the execution at the cursor ("decision: go_to(X) vs go_to(Y)").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from typing import Any

from dexviz.analysis._diff_compare import Difference, changed_parts
from dexviz.history import Event
from dexviz.replay.frame import heading_html, panels_at
from dexviz.replay.session import Replay
from dexviz.viz.diff_view import RunDiff

__all__ = ["COMPARE_CSS", "Paired", "compare_html", "difference_line"]

COMPARE_CSS = """
.dx-compare { margin: 6px 0 10px 0; }
.dx-compare .dx-sides { display: flex; flex-flow: row wrap; gap: 12px; align-items: flex-start; }
.dx-compare .dx-side { flex: 1 1 0; min-width: min(540px, 100%); box-sizing: border-box;
  border: 1px solid #cbd5e1; border-radius: 4px; padding: 6px 8px; overflow-x: auto; }
.dx-compare .dx-side-title { font-weight: 600; margin-bottom: 4px; }
.dx-compare .dx-diff-now { border: 2px solid #d62728; background: #fdecea; color: #7f1d1d;
  border-radius: 4px; padding: 4px 8px; margin: 4px 0; font-family: monospace; }
.dx-compare .dx-same { border: 1px solid #16a34a; background: #ecfdf3; color: #14532d;
  border-radius: 4px; padding: 4px 8px; margin: 4px 0; }
.dx-compare .dx-differing { margin: 4px 0; font-size: 12px; }
.dx-compare .dx-differing .dx-here { color: #b91c1c; font-weight: 700; }
"""
"""The compare block's style: the two columns sit side by side where both fit (about
1100 px) and stack, each the full width, below that."""

_NO_DIFFERENCE = "no difference: the runs are the same, execution by execution"


def difference_line(difference: Difference, limit: int = 120) -> str:
    """One difference as ``aspect: a's value vs b's value`` (only the parts that differ)."""
    left, right = changed_parts(difference.a, difference.b)
    return f"{difference.aspect}: {_short(left, limit)} vs {_short(right, limit)}"


def _short(value: Any, limit: int) -> str:
    if isinstance(value, dict) and isinstance(value.get("kind"), str) and "next" in value:
        text = _decision(value)
    else:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                              default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _decision(value: dict[str, Any]) -> str:
    """A recorded decision as Dex writes it: ``go_to(SaveContractEdit)``, ``dead_end()``."""
    kind = str(value["kind"])
    targets = value.get("next") or []
    steps = ", ".join(str(t.get("step_type", t)) if isinstance(t, dict) else str(t)
                      for t in targets)
    if kind == "NEXT":
        return f"{'go_to' if len(targets) == 1 else 'go_to_many'}({steps})"
    return f"{kind.lower()}({steps})"


@dataclass
class Paired:
    """Run b's replay following run a's cursor, and the diff that aligns them.

    Attributes:
        diff: The two runs' RunDiff (run a is the stepped one).
        other: Run b's replay; its cursor is moved only by ``follow``.
        size_a: How many events run a's history had when it was diffed (a live run's grows).
    """

    diff: RunDiff
    other: Replay
    size_a: int = 0
    _trace_a: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)
    _history_b: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, diff: RunDiff, other: Replay, size_a: int) -> Paired:
        """Pair ``other`` (run b's replay) with ``diff``; index both runs' events by seq.

        ``size_a`` is the length of run a's history that ``diff`` was computed from.
        """
        trace_a = {_key(e): i for i, e in enumerate(diff.comparison.a.events)}
        history_b = {_key(e): i for i, e in enumerate(other.history)}
        return cls(diff, other, size_a, trace_a, history_b)

    def aligned_index(self, event_a: Event) -> int | None:
        """Run b's history index aligned with ``event_a`` of run a (or the nearest before).

        None when nothing up to ``event_a`` is aligned, or ``event_a`` is not of the
        compared run.
        """
        position = self._trace_a.get(_key(event_a))
        if position is None:
            return None
        found = self.diff.aligned_event(position)
        if found is None:
            return None
        return self._history_b.get(_key(self.diff.comparison.b.events[found]))

    def follow(self, event_a: Event) -> int | None:
        """Move run b's cursor to the event aligned with ``event_a``; its index, or None.

        Run b's cursor stays where it is when nothing is aligned yet.
        """
        index = self.aligned_index(event_a)
        if index is not None and index != self.other.index:
            self.other.seek(index)
        return index

    def differences_at(self, event_a: Event) -> tuple[Difference, ...]:
        """The differences of the execution ``event_a`` is about (none for other events)."""
        execution = event_a.execution_id
        if execution is None:
            return ()
        return tuple(d for d in self.diff.differences if d.execution_a == execution)


def _key(event: Event) -> tuple[str, int]:
    return (event.run_id, event.seq)


def compare_html(replay: Replay, paired: Paired) -> str:
    """Both runs at the aligned event, side by side: heading and panels of each.

    Above the columns: the difference of the execution at run a's cursor (highlighted), or
    that the runs do not differ; below it the executions that differ, the cursor's marked.
    """
    diff = paired.diff
    now = paired.differences_at(replay.event)
    if not diff:
        verdict = f'<div class="dx-same">{escape(_NO_DIFFERENCE)}</div>'
    elif now:
        lines = "<br>".join(escape(f"{d.where()}: {difference_line(d)}") for d in now)
        verdict = f'<div class="dx-diff-now">{lines}</div>'
    else:
        verdict = (f'<div class="dx-same">no difference at this execution '
                   f"({len(diff)} difference(s) elsewhere)</div>")
    aligned = paired.aligned_index(replay.event)
    b_title = "run b" + (" (nothing aligned yet)" if aligned is None else "")
    sides = (_side("run a", replay) + _side(b_title, paired.other))
    return (f'<div class="dx-compare"><style>{COMPARE_CSS}</style>{verdict}'
            f"{_differing(paired, replay.event)}"
            f'<div class="dx-sides">{sides}</div></div>')


def _side(title: str, replay: Replay) -> str:
    panels = "".join(panels_at(replay))
    return (f'<div class="dx-side"><div class="dx-side-title">{escape(title)}</div>'
            f"{heading_html(replay)}{panels}</div>")


def _differing(paired: Paired, event_a: Event, limit: int = 12) -> str:
    groups = list(paired.diff.by_execution().items())
    if not groups:
        return ""
    items = []
    for (left, _), found in groups[:limit]:
        where = escape(found[0].where())
        aspects = escape(", ".join(dict.fromkeys(str(d.aspect) for d in found)))
        here = left is not None and left == event_a.execution_id
        mark = ' class="dx-here"' if here else ""
        items.append(f"<span{mark}>{where} ({aspects})</span>")
    more = f" … and {len(groups) - limit} more" if len(groups) > limit else ""
    return (f'<div class="dx-differing">differing executions: {"; ".join(items)}'
            f"{more}</div>")
