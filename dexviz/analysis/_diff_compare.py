"""Aligning two folded runs by Step execution lineage, and comparing each aligned pair.

Two executions are the same when they have the same place in the lineage: the same Step type,
created by the same (aligned) parent, as its n-th child of that type. Roots are matched by
where they came from (``__start__``, ``__rpc/<name>``). Ids never take part, so a shifted
execution number, or an extra attempt, leaves every later execution aligned.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dexviz.analysis._diff_fold import Consumed, ExecutionTrace, MethodCommit, RunTrace


class Aspect(enum.StrEnum):
    """What differed between two aligned executions (or between the two runs as a whole)."""

    FLOW = "flow"
    STEP = "step"
    INPUT = "input"
    WAIT = "wait"
    CONSUMED = "consumed"
    DECISION = "decision"
    OUTPUT = "output"
    PUBLISHED = "published"
    WRITES = "writes"
    TIMERS = "timers"
    FAILURE = "failure"
    CANCELED = "canceled"
    TIMING = "timing"
    CLOSE = "close"
    ORDER = "order"
    """A replay only: no work the current code had ready could produce the next recorded event."""


METHOD_RESULT_ASPECTS = frozenset(Aspect) - {Aspect.TIMING, Aspect.ORDER}
"""Everything but timing: what replaying a recorded run against changed code compares."""


@dataclass(frozen=True)
class Difference:
    """One difference between run a and run b.

    Attributes:
        aspect: What differed.
        execution_a: The execution on side a (None when it exists only on side b, or for a
            difference of the run as a whole).
        execution_b: The aligned execution on side b (None likewise).
        step_type: The Step type (side a's when both exist).
        method: ``wait_for`` or ``execute`` when one method's result differs, else None.
        seq_a: The event of side a that shows the difference (None when a lacks it).
        seq_b: The event of side b that shows it.
        a: Side a's value (JSON-ready, ids left out).
        b: Side b's value.
    """

    aspect: Aspect
    execution_a: str | None
    execution_b: str | None
    step_type: str | None
    method: str | None
    seq_a: int | None
    seq_b: int | None
    a: Any
    b: Any

    @property
    def order(self) -> tuple[int, int]:
        """Where the difference shows: side a's seq when a has it, else side b's."""
        if self.seq_a is not None:
            return (self.seq_a, self.seq_b or 0)
        return (self.seq_b or 0, 0)

    def where(self) -> str:
        """The executions on both sides: ``Save-3 ~ Save-5``, ``Save-3 (only in a)``."""
        if self.execution_a is None and self.execution_b is None:
            return "the run"
        if self.execution_b is None:
            return f"{self.execution_a} (only in a)"
        if self.execution_a is None:
            return f"{self.execution_b} (only in b)"
        if self.execution_a == self.execution_b:
            return self.execution_a
        return f"{self.execution_a} ~ {self.execution_b}"

    def describe(self) -> str:
        """One line: where, which method, what differed, and both sides' values."""
        method = f" {self.method}" if self.method else ""
        seqs = f"#{self.seq_a if self.seq_a is not None else '-'}/" \
               f"#{self.seq_b if self.seq_b is not None else '-'}"
        left, right = changed_parts(self.a, self.b)
        return (f"{seqs} {self.where()}{method}: {self.aspect} differs: "
                f"a={_short(left)} b={_short(right)}")


def changed_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """The parts of two values that differ: differing keys of dicts, the first differing item."""
    while True:
        if isinstance(a, dict) and isinstance(b, dict):
            keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
            if len(keys) != 1:
                return {k: a.get(k) for k in keys}, {k: b.get(k) for k in keys}
            a, b = a.get(keys[0]), b.get(keys[0])
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
            at = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
            if len(at) != 1:
                return a, b
            a, b = a[at[0]], b[at[0]]
        else:
            return a, b


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------- alignment


def align(a: RunTrace, b: RunTrace) -> tuple[list[tuple[str | None, str | None]], dict[str, str]]:
    """Pairs of executions (None for a side that lacks one) in a's lineage order; and a -> b."""
    pairs: list[tuple[str | None, str | None]] = []
    mapping: dict[str, str] = {}
    queue: deque[tuple[Sequence[str], Sequence[str]]] = deque([(a.roots, b.roots)])
    while queue:
        ids_a, ids_b = queue.popleft()
        for left, right in _match(ids_a, a, ids_b, b):
            pairs.append((left, right))
            if left is not None and right is not None:
                mapping[left] = right
                queue.append((a.executions[left].children, b.executions[right].children))
            else:
                _orphans(pairs, a if left else b, left or right or "", left is not None)
    return pairs, mapping


def _orphans(pairs: list[tuple[str | None, str | None]], run: RunTrace, root: str,
             side_a: bool) -> None:
    """An unmatched execution's descendants are unmatched too."""
    stack = list(reversed(run.executions[root].children))
    while stack:
        execution_id = stack.pop()
        pairs.append((execution_id, None) if side_a else (None, execution_id))
        stack.extend(reversed(run.executions[execution_id].children))


def _lineage_keys(ids: Sequence[str], run: RunTrace) -> Iterator[tuple[tuple[Any, ...], str]]:
    seen: dict[tuple[Any, ...], int] = {}
    for execution_id in ids:
        trace = run.executions[execution_id]
        origin = trace.parent if trace.parent not in run.executions else None
        base = (origin, trace.step_type)
        ordinal = seen.get(base, 0)
        seen[base] = ordinal + 1
        yield (*base, ordinal), execution_id


def _match(ids_a: Sequence[str], a: RunTrace, ids_b: Sequence[str],
           b: RunTrace) -> list[tuple[str | None, str | None]]:
    keyed_b = dict(_lineage_keys(ids_b, b))
    matched: list[tuple[str | None, str | None]] = []
    for key, left in _lineage_keys(ids_a, a):
        matched.append((left, keyed_b.pop(key, None)))
    matched.extend((None, right) for right in keyed_b.values())
    return matched


# ---------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Comparison:
    """What to compare: the aspects, and the timing tolerance (None: timing is not compared)."""

    aspects: frozenset[Aspect]
    tolerance_ns: int | None


class PairComparer:
    """Compares aligned executions of two runs, one pair at a time."""

    def __init__(self, a: RunTrace, b: RunTrace, mapping: dict[str, str],
                 comparison: Comparison) -> None:
        self.a, self.b, self.mapping = a, b, mapping
        self.comparison = comparison
        self.found: list[Difference] = []

    def pair(self, left: str | None, right: str | None) -> None:
        """Compare one aligned pair (or report an execution that only one side has)."""
        if left is None or right is None:
            trace = self.a.executions[left] if left else self.b.executions[right or ""]
            self._emit(Aspect.STEP, trace if left else None, None if left else trace, None,
                       trace.step_type if left else None, None if left else trace.step_type,
                       trace.created_seq if left else None, None if left else trace.created_seq)
            return
        ta, tb = self.a.executions[left], self.b.executions[right]
        for check in self._checks:
            check(self, ta, tb)

    def _emit(self, aspect: Aspect, ta: ExecutionTrace | None, tb: ExecutionTrace | None,
              method: str | None, va: Any, vb: Any, seq_a: int | None,
              seq_b: int | None) -> None:
        if aspect not in self.comparison.aspects:
            return
        step_type = ta.step_type if ta is not None else tb.step_type if tb is not None else None
        self.found.append(Difference(
            aspect, ta.execution_id if ta else None, tb.execution_id if tb else None,
            step_type, method, seq_a, seq_b, va, vb,
        ))

    def _input(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        if ta.input != tb.input:
            self._emit(Aspect.INPUT, ta, tb, None, ta.input, tb.input,
                       ta.created_seq, tb.created_seq)

    def _methods(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        for method in ("wait_for", "execute"):
            ca: MethodCommit | None = getattr(ta, method)
            cb: MethodCommit | None = getattr(tb, method)
            if ca is None and cb is None:
                continue
            seq_a, seq_b = (ca.seq if ca else None), (cb.seq if cb else None)
            result_aspect = Aspect.WAIT if method == "wait_for" else Aspect.DECISION
            ra = _result(ca, self.a, ta, self._to_b)
            rb = _result(cb, self.b, tb, _same)
            if ra != rb:
                self._emit(result_aspect, ta, tb, method, ra, rb, seq_a, seq_b)
            if method == "execute":
                oa, ob = _output(ca), _output(cb)
                if oa != ob:
                    self._emit(Aspect.OUTPUT, ta, tb, method, oa, ob, seq_a, seq_b)
            pa, pb = (ca.published if ca else None), (cb.published if cb else None)
            if pa != pb and ca is not None and cb is not None:
                self._emit(Aspect.PUBLISHED, ta, tb, method, pa, pb, seq_a, seq_b)
            wa, wb = (ca.writes if ca else ()), (cb.writes if cb else ())
            if wa != wb:
                self._emit(Aspect.WRITES, ta, tb, method, list(wa), list(wb), seq_a, seq_b)

    def _to_b(self, execution_id: str | None) -> str | None:
        if execution_id is None:
            return None
        return self.mapping.get(execution_id, f"{execution_id} (unaligned)")

    def _consumed(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        known = self.a.executions
        ca = [_consumed_as(m, self._to_b if m.publisher in known else _same)
              for m in ta.consumed]
        cb = [_consumed_as(m, _same) for m in tb.consumed]
        if ca != cb:
            # Compared in b's numbering; shown in each side's own.
            own = [_consumed_as(m, _same) for m in ta.consumed]
            self._emit(Aspect.CONSUMED, ta, tb, "wait_for", own, cb, ta.consumed_seq,
                       tb.consumed_seq)

    def _failures(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        fa, fb = [f[1:] for f in ta.failures], [f[1:] for f in tb.failures]
        if fa == fb:
            return
        at = next((i for i, (x, y) in enumerate(zip(fa, fb, strict=False)) if x != y),
                  min(len(fa), len(fb)))
        seq_a = ta.failures[at][0] if at < len(fa) else None
        seq_b = tb.failures[at][0] if at < len(fb) else None
        method = (fa[at] if at < len(fa) else fb[at])[0]
        self._emit(Aspect.FAILURE, ta, tb, method, fa, fb, seq_a, seq_b)

    def _timers(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        ma, mb = [t[1] for t in ta.timers], [t[1] for t in tb.timers]
        if ma != mb:
            self._emit(Aspect.TIMERS, ta, tb, "wait_for", ma, mb,
                       ta.timers[0][0] if ta.timers else None,
                       tb.timers[0][0] if tb.timers else None)

    def _canceled(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        xa = None if ta.canceled is None else (self._to_b(ta.canceled[1]), ta.canceled[2])
        xb = None if tb.canceled is None else (tb.canceled[1], tb.canceled[2])
        if ta.canceled is not None and ta.canceled[1] not in self.a.executions:
            xa = (ta.canceled[1], ta.canceled[2])
        if xa != xb:
            self._emit(Aspect.CANCELED, ta, tb, None, xa, xb,
                       ta.canceled[0] if ta.canceled else None,
                       tb.canceled[0] if tb.canceled else None)

    def _timing(self, ta: ExecutionTrace, tb: ExecutionTrace) -> None:
        tolerance = self.comparison.tolerance_ns
        if tolerance is None:
            return
        for label, method, ea, eb in _moments(ta, tb):
            if ea is None or eb is None:
                continue
            da, db = ea[1] - self.a.start_ns, eb[1] - self.b.start_ns
            if abs(da - db) > tolerance:
                self._emit(Aspect.TIMING, ta, tb, method, {label: da / 1e9},
                           {label: db / 1e9}, ea[0], eb[0])
                return

    _checks: tuple[Callable[[PairComparer, ExecutionTrace, ExecutionTrace], None], ...] = (
        _input, _methods, _consumed, _failures, _timers, _canceled, _timing,
    )


def _same(execution_id: str | None) -> str | None:
    return execution_id


def _result(commit: MethodCommit | None, run: RunTrace, trace: ExecutionTrace,
            to_b: Callable[[str | None], str | None]) -> Any:
    """A method's result as compared: the wait, or the decision with its canceled ones mapped."""
    if commit is None:
        return None
    result = {k: v for k, v in commit.result.items() if k != "output"}
    if trace.canceled_ids and commit is trace.execute:
        result["canceled"] = sorted(str(to_b(c)) for c in trace.canceled_ids)
    return result


def _output(commit: MethodCommit | None) -> Any:
    return None if commit is None else commit.result.get("output")


def _consumed_as(message: Consumed, to_b: Callable[[str | None], str | None]) -> list[Any]:
    return [message.channel, message.value, to_b(message.publisher)]


def _moments(ta: ExecutionTrace, tb: ExecutionTrace) -> Iterator[
        tuple[str, str | None, tuple[int, int] | None, tuple[int, int] | None]]:
    yield "created", None, (ta.created_seq, ta.created_ns), (tb.created_seq, tb.created_ns)
    for method in ("wait_for", "execute"):
        ca: MethodCommit | None = getattr(ta, method)
        cb: MethodCommit | None = getattr(tb, method)
        yield (f"{method} committed", method, (ca.seq, ca.time_ns) if ca else None,
               (cb.seq, cb.time_ns) if cb else None)
