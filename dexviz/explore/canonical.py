"""Canonical fingerprints for the stateful search: states up to execution numbering and symmetry.

``explore.fingerprint`` keeps execution ids (``Type-N``) and the engine's order, as the
stateless strategies' pruning needs. Here executions are named by lineage instead — the
parent's name, the Step type and the input (hashed), and the place among identical siblings —
the executions, waiters, ready units, timers and held locks are compared as sets, a suspended
coroutine handler is described by its frames (``explore.coroutines``), and a declared symmetry
(``explore.symmetry``) renames its values by their role. ``Keys`` gives the digest under each
reduction, so the report can say which one merged two states.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.state import Execution
from dexviz.engine.runtime import Runtime
from dexviz.engine.state_copy import settled
from dexviz.explore.canonical_text import Pieces, pieces_for
from dexviz.explore.coroutines import CoroutineOpaque, describe_callback, describe_task
from dexviz.explore.fingerprint import (
    EXECUTION_NAMES,
    RUN_NAMES,
    RUN_SKIPPED,
    Fields,
    Opaque,
    describe_execution,
    describe_messages,
    faults_left,
    frozen_text,
    message_ranks,
    one_run,
    running,
    unit,
)
from dexviz.explore.state_key import SettledMemo
from dexviz.explore.symmetry import Symmetry

__all__ = ["Keys", "canonical_fingerprint", "replace_all"]


# The Type-N counters only choose the next execution's number: canonical names replace them.
_CANON_RUN_FIELDS = Fields(
    tuple(n for n in RUN_NAMES if n not in ("_first_type", "_first_count", "start_input")),
    RUN_SKIPPED | {"_more_counts"},
)


@dataclass
class _Parts:
    """A state's description in pieces.

    Those whose order is behaviour, those whose is not, and each execution's lineage (id,
    parent id, Step type, input) in creation order.
    """

    ordered: list[str] = field(default_factory=list)
    unordered: list[str] = field(default_factory=list)
    lineage: list[tuple[str, str, str, str]] = field(default_factory=list)


_DESCRIBED = SettledMemo()
"""Settled executions without held messages, described (their text needs no message ranks)."""


_SHOWN = attrgetter(*EXECUTION_NAMES)
_HANDLES = frozenset({"method_timeout", "heartbeat_timer"})
"""Shown only as there or not (``describe_execution``): a copy holds a copy of the handle."""


def _unchanged(ex: Execution, source: Execution) -> bool:
    """Whether ``describe_execution`` shows ``ex`` as it shows ``source``.

    Compared part by part as the description reads them: the shown slots and extra fields by
    equality (shared values are the very same objects), the handles by whether they are
    there, the timers by what is shown of them. Its Task and Step are not shown.
    """
    try:
        if _SHOWN(ex) != _SHOWN(source) or (ex.pending_unit is None) != (
            source.pending_unit is None
        ):
            return False
        mine, theirs = ex.__dict__, source.__dict__
        return list(mine) == list(theirs) and all(
            value is theirs[name] or _same_extra(name, value, theirs[name])
            for name, value in mine.items()
        )
    except Exception:  # noqa: BLE001 - a value that cannot be compared: describe it afresh
        return False


def _same_extra(name: str, value: Any, other: Any) -> bool:
    if name in _HANDLES:
        return (value is None) == (other is None)
    if name == "_timers":
        return list(map(_timer, value or ())) == list(map(_timer, other or ()))
    return bool(value == other)


def _timer(timer: Any) -> tuple[Any, ...]:
    return (timer.index, timer.condition_id, timer.fire_at_ns, timer.done)


class LiveTexts:
    """Descriptions of live executions, reused for their unchanged copies in later states.

    A live execution is copied on every restore, so it is never met twice by identity. But
    an execution described just before the explorer snapshots the state is one the snapshot
    holds (handed over, ``engine_state.take_over``, or copied) and never changes again: its
    text is kept (``keep``), and a copy restored from that snapshot that the next step left
    as it was (every slot the same) is shown by that text.
    """

    def __init__(self, limit: int = 50_000) -> None:
        # Each entry holds its execution alive: bounded to about the frontier's live ones.
        self._kept: dict[int, tuple[Execution, str]] = {}
        self.made: list[tuple[Execution, str]] = []
        self.limit = limit

    def text(self, ex: Execution, source: Execution | None, make: Callable[[], str]) -> str:
        """The description of ``ex``: ``source``'s when it is kept and ``ex`` is unchanged."""
        text = None
        if source is not None:
            found = self._kept.get(id(source))
            if found is not None and found[0] is source and _unchanged(ex, source):
                text = found[1]
        if text is None:
            text = make()
        self.made.append((ex, text))
        return text

    def keep(self, held: Mapping[str, Execution]) -> None:
        """Keep the texts made last of the executions ``held`` (a snapshot's) by identity."""
        kept = self._kept
        if len(kept) >= self.limit:
            kept.clear()
        for ex, text in self.made:
            copy = held.get(ex.execution_id)
            # The very object (handed over), or a copy of it that holds the same.
            if copy is ex or (copy is not None and _unchanged(copy, ex)):
                kept[id(copy)] = (copy, text)
        self.made = []


LIVE = LiveTexts()


_SETTLED: dict[int, tuple[Execution, str, tuple[str, str, str, str]]] = {}
"""Settled executions without held messages: their description and lineage, by identity.

Neither changes (the engine never writes a settled execution again, and its text needs no
message ranks); a settled execution has no Task, so it owns no unit and runs no handler.
Each entry holds its execution, so an id is not reused while it is cached.
"""
_SETTLED_LIMIT = 200_000


def _keep_settled(ex: Execution, text: str, line: tuple[str, str, str, str]) -> None:
    if len(_SETTLED) >= _SETTLED_LIMIT:
        _SETTLED.clear()
    _SETTLED[id(ex)] = (ex, text, line)


def _described(
    ex: Any, rank: dict[int, int], sources: Mapping[str, Execution] | None = None
) -> str:
    if ex.held_messages:
        return repr(describe_execution(ex, rank))
    if settled(ex):
        return _DESCRIBED.text(ex, lambda e: repr(describe_execution(e, rank)))
    source = None if sources is None else sources.get(ex.execution_id)
    return LIVE.text(ex, source, lambda: repr(describe_execution(ex, rank)))


def _canonical_parts(
    rt: Runtime, outside: Sequence[Any], sources: Mapping[str, Execution] | None = None
) -> _Parts:
    run = one_run(rt, coroutines=True)
    sim = rt.sim
    assert sim is not None
    rank = message_ranks(run)
    parts = _Parts()
    parts.ordered.append(repr(_CANON_RUN_FIELDS(run)))
    queues = run.queues_view.items()
    parts.ordered.extend(repr((k, describe_messages(q, rank))) for k, q in queues if q)
    parts.unordered.extend(f"w {k} {w.execution_id}" for k, ws in run.waiters.items() for w in ws)
    owners: dict[asyncio.Task[Any], str] = {}
    unordered, lineage, kept = parts.unordered, parts.lineage, _SETTLED
    for ex in run.executions.values():
        found = kept.get(id(ex))
        if found is not None and found[0] is ex:
            unordered.append(found[1])
            lineage.append(found[2])
            continue
        text = _described(ex, rank, sources)
        unordered.append(text)
        given = repr(frozen_text(ex.input))  # an input's repr, made once for a frozen record
        line = (ex.execution_id, ex.from_execution_id, ex.step_type, given)
        lineage.append(line)
        if not ex.held_messages and settled(ex):
            _keep_settled(ex, text, line)
            continue
        if isinstance(ex.task, asyncio.Task):
            owners[ex.task] = ex.execution_id
        if running(ex):
            unordered.append(f"c {ex.execution_id} {_task(ex.task)!r}")
    parts.ordered.append(repr(sim.now_ns))
    parts.unordered.extend(f"r {_unit(u, owners)!r}" for u in sim.ready_units)
    parts.unordered.extend(f"t {(due, _unit(u, owners))!r}" for due, u in sim.timed_units())
    for flow_id, table in rt.lock_tables.items():
        parts.unordered.extend(f"l {flow_id} {item!r}" for item in table.held.items())
        waiting = tuple((keys, owner, unit(resume)) for keys, owner, resume in table.waiting)
        parts.ordered.append(f"q {flow_id} {waiting!r}")
    parts.ordered.append(repr((faults_left(rt.faults), tuple(outside))))
    return parts


def _task(task: Any) -> tuple[Any, ...]:
    if not isinstance(task, asyncio.Task):
        raise Opaque(type(task).__qualname__)
    try:
        return describe_task(task)
    except CoroutineOpaque as error:
        raise Opaque(str(error)) from error


def _unit(item: Any, owners: dict[asyncio.Task[Any], str]) -> Any:
    if isinstance(item, LoopCallback):
        try:
            return describe_callback(item, owners)
        except CoroutineOpaque as error:
            raise Opaque(str(error)) from error
    return unit(item)


def _names(lineage: list[tuple[str, str, str, Any]], rename: dict[str, str],
           pieces: Pieces) -> dict[str, str]:
    """Each execution's canonical name, by lineage.

    Its parent's name, Step type and input (hashed), and its place among siblings of the same
    lineage, in creation order.
    """
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for execution_id, parent, step_type, given in lineage:
        key = f"{names.get(parent, parent)}|{step_type}|{pieces.moved(given, rename)}"
        base = f"{step_type}@{pieces.base(key)}"
        count = seen[base] = seen.get(base, -1) + 1
        names[execution_id] = f"{base}.{count}"
    return names


def replace_all(text: str, mapping: dict[str, str]) -> str:
    """``text`` with every key of ``mapping`` replaced, longest keys first.

    A shorter key inside a longer one (``Edit-1`` in ``Edit-12``) is never cut out of it: the
    longer one has been replaced by then, and no replacement holds a key.
    """
    for key in sorted(mapping, key=len, reverse=True):
        if key in text:
            text = text.replace(key, mapping[key])
    return text


@dataclass(frozen=True)
class Keys:
    """A state's digests under each reduction, to tell which one merged two states.

    ``canonical`` is the one the search keys on (numbering and declared symmetry);
    ``numbered`` leaves the symmetry out (it is ``canonical`` when none is declared);
    ``exact`` keeps the execution ids and the engine's order as well.
    """

    canonical: str
    numbered: str
    exact: str


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def canonical_fingerprint(
    rt: Runtime,
    outside: Sequence[Any],
    start_input: Any,
    symmetry: Symmetry | None = None,
    sources: Mapping[str, Execution] | None = None,
    texts: Pieces | None = None,
) -> Keys | None:
    """The digest of the state up to execution numbering (and ``symmetry``), or None.

    Executions are named by lineage (``_names``), not by ``Type-N``; the executions, waiters,
    ready units, timers and held locks are compared as sets, so the order in which executions
    were created is not part of the state; the start input (the same in every state) is one
    marker, so that a symmetry permuting its values leaves it alone. A suspended coroutine
    handler is described by its frames (``explore.coroutines``). None when a part cannot be
    described soundly. ``sources``: the executions of the snapshot the state was restored
    from, whose kept descriptions serve their unchanged copies (``LiveTexts``). ``texts``:
    ``pieces_for(start_input, symmetry)``, when the caller keeps it (it reads the input's repr).
    """
    LIVE.made = []
    try:
        parts = _canonical_parts(rt, outside, sources)
    except Opaque:
        return None
    if texts is None:
        texts = pieces_for(start_input, symmetry)
    found = texts.of((*parts.ordered, *parts.unordered))
    if found is None:
        return None
    lineage = tuple(parts.lineage)
    cut = len(parts.ordered)

    def digest(rename: dict[str, str], renamed: tuple[str, ...]) -> str:
        def make() -> dict[str, str]:
            return _names([(e, p, t, texts.piece(i)) for e, p, t, i in lineage], rename, texts)

        done = texts.sums(found, rename, texts.naming((lineage, renamed), make))
        # Fixed-size piece digests: the count of ordered ones makes the composition unique.
        whole = hashlib.blake2b(b"%d;" % cut, digest_size=16)
        whole.update(b"".join(done[:cut]))
        whole.update(b"".join(sorted(done[cut:])))
        return whole.hexdigest()

    numbered = digest({}, ())
    if symmetry is None:
        canonical = numbered
    else:
        rename = texts.roles(found)
        canonical = digest(rename, tuple(rename[n] for g in symmetry.groups for n in g))
    exact = hashlib.blake2b(b"".join([p.sum for p in found]), digest_size=16).hexdigest()
    return Keys(canonical, numbered, exact)
