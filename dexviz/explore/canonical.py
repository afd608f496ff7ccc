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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import is_, itemgetter
from typing import Any

from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.runtime import Runtime
from dexviz.engine.state_copy import settled
from dexviz.explore.canonical_memo import StateMemo, StateRecord, frozen, shows_as, unchanged
from dexviz.explore.canonical_text import Pieces, _Piece, pieces_for
from dexviz.explore.coroutines import CoroutineOpaque, describe_callback, describe_task
from dexviz.explore.fingerprint import (
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
from dexviz.explore.symmetry import Symmetry

__all__ = ["Keys", "canonical_fingerprint", "replace_all"]


# The Type-N counters only choose the next execution's number: canonical names replace them.
_RUN_NAMES = tuple(n for n in RUN_NAMES if n not in ("_first_type", "_first_count", "start_input"))
_CANON_RUN_FIELDS = Fields(_RUN_NAMES, RUN_SKIPPED | {"_more_counts"})
_RUN_SHOWN = _CANON_RUN_FIELDS.read
_RUN_UNSHOWN = _CANON_RUN_FIELDS.skipped


def _run_extras(run: FlowRun) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in vars(run).items() if k not in _RUN_UNSHOWN]


_ATTRIBUTES, _COMPLETIONS = _RUN_NAMES.index("_attributes"), _RUN_NAMES.index("_completions")
_OTHERS = itemgetter(*[i for i in range(len(_RUN_NAMES)) if i not in (_ATTRIBUTES, _COMPLETIONS)])
"""The run's shown slots but the two containers, in one C call."""


def _run_shown(run: FlowRun) -> tuple[Any, ...]:
    """What ``_CANON_RUN_FIELDS`` shows of a run, for ``_same_run``.

    Its slots but the two containers, the Attributes' names and values, the completions
    (all shared with the snapshot, the containers copied), and its extra fields.
    """
    shown = _RUN_SHOWN(run)
    attributes, completions = shown[_ATTRIBUTES], shown[_COMPLETIONS]
    return (
        _OTHERS(shown),
        None if attributes is None else tuple(attributes),
        None if attributes is None else tuple(attributes.values()),
        None if completions is None else tuple(completions),
        _run_extras(run),
    )


def _same_run(now: tuple[Any, ...], then: tuple[Any, ...]) -> bool:
    """Whether a run's ``_run_shown`` shows as the kept one did: the very values.

    Of the kept one, the extra fields are ``frozen``; they are compared by ``shows_as``.
    """
    for mine, theirs in zip(now[:4], then[:4]):  # noqa: B905 - both five long
        if mine is not theirs and (
            mine is None or theirs is None or len(mine) != len(theirs)
            or not all(map(is_, mine, theirs))
        ):  # fmt: skip
            return False
    return shows_as(now[4], then[4])


def _run_piece(run: FlowRun, parent: StateRecord | None, fresh: Callable[[str], _Piece]
               ) -> tuple[tuple[Any, ...], _Piece]:
    """The run's own fields (``_CANON_RUN_FIELDS``) as ``_run_shown``, and their piece.

    The parent's piece when the fields show as they did there.
    """
    shown = _run_shown(run)
    kept = None if parent is None else parent.run
    if kept is not None and _same_run(shown, kept[0]):
        return kept
    return (*shown[:4], frozen(shown[4])), fresh(repr(_CANON_RUN_FIELDS(run)))


@dataclass
class _Parts:
    """A state's description in pieces.

    Those whose order is behaviour, those whose is not, and each execution's lineage (id,
    parent id, Step type, input) in creation order.
    """

    ordered: list[_Piece] = field(default_factory=list)
    unordered: list[_Piece] = field(default_factory=list)
    lineage: list[tuple[str, str, str, str]] = field(default_factory=list)


class _LastMemo:
    """Forwards a snapshot's executions to the memo of the state described last.

    The explorer describes a state, then snapshots it (``schedule._Run.capture`` calls
    ``LIVE.keep`` with the snapshot's executions): the description is kept for the states
    restored from that snapshot (``canonical_memo``).
    """

    def __init__(self) -> None:
        self.memo: StateMemo | None = None

    def keep(self, held: Mapping[str, Execution]) -> None:
        """Keep the last description for the snapshot holding ``held``."""
        memo, self.memo = self.memo, None
        if memo is not None:
            memo.keep(held)


LIVE = _LastMemo()


def _canonical_parts(
    rt: Runtime, outside: Sequence[Any], texts: Pieces, parent: StateRecord | None
) -> tuple[_Parts, StateRecord]:
    run = one_run(rt, coroutines=True)
    sim = rt.sim
    assert sim is not None
    rank = message_ranks(run)
    record = StateRecord(rank)
    parts = _Parts()
    fresh = _fresh(texts)
    record.run = _run_piece(run, parent, fresh)
    parts.ordered.append(record.run[1])
    _queues(run, rank, parent, record, parts, fresh)
    parts.unordered.extend(
        fresh(f"w {k} {w.execution_id}") for k, ws in run.waiters.items() for w in ws
    )
    owners = _executions(run, rank, parent, record, parts, texts)
    parts.ordered.append(fresh(repr(sim.now_ns)))
    parts.unordered.extend(fresh(f"r {_unit(u, owners)!r}") for u in sim.ready_units)
    parts.unordered.extend(fresh(f"t {(due, _unit(u, owners))!r}") for due, u in sim.timed_units())
    for flow_id, table in rt.lock_tables.items():
        parts.unordered.extend(fresh(f"l {flow_id} {item!r}") for item in table.held.items())
        waiting = tuple((keys, owner, unit(resume)) for keys, owner, resume in table.waiting)
        parts.ordered.append(fresh(f"q {flow_id} {waiting!r}"))
    parts.ordered.append(fresh(repr((faults_left(rt.faults), tuple(outside)))))
    return parts, record


def _fresh(texts: Pieces) -> Callable[[str], _Piece]:
    """A text as a piece; a text that names an object by address makes the state opaque."""
    make = texts.piece

    def fresh(text: str) -> _Piece:
        piece = make(text)
        if piece.opaque:
            raise Opaque("a repr names an object by its address")
        return piece

    return fresh


def _queues(
    run: FlowRun,
    rank: dict[int, int],
    parent: StateRecord | None,
    record: StateRecord,
    parts: _Parts,
    fresh: Callable[[str], _Piece],
) -> None:
    """Each non-empty queue's piece: the parent's when it holds the very same messages.

    Messages are never changed once published; their ranks must be the same too.
    """
    kept = None if parent is None or parent.rank != rank else parent.queues
    for k, q in run.queues_view.items():
        if not q:
            continue
        found = None if kept is None else kept.get(k)
        if found is None or not _same_queue(q, found[0]):
            found = (tuple(q), fresh(repr((k, describe_messages(q, rank)))))
        record.queues[k] = found
        parts.ordered.append(found[1])


def _same_queue(queue: Iterable[Any], kept: tuple[Any, ...]) -> bool:
    """Whether ``queue`` holds the very messages ``kept`` (never changed once published)."""
    return len(kept) == len(queue) and all(map(is_, queue, kept))  # type: ignore[arg-type]


def _executions(
    run: FlowRun,
    rank: dict[int, int],
    parent: StateRecord | None,
    record: StateRecord,
    parts: _Parts,
    texts: Pieces,
) -> dict[asyncio.Task[Any], str]:
    """Each execution's piece and lineage line, reused when it shows the same as before.

    A settled execution is the very object in every state (kept by identity); a live one is
    compared with the execution of the same id in the state restored from (``unchanged``).
    Returns the owner of each handler Task.
    """
    owners: dict[asyncio.Task[Any], str] = {}
    unordered, lineage = parts.unordered, parts.lineage
    memo = texts.memo
    kept, before = memo.settled, None if parent is None else parent.executions
    fresh = _fresh(texts)
    for execution_id, ex in run.executions.items():
        found = kept.get(id(ex))
        if found is not None and found[0] is ex:
            unordered.append(found[1])
            lineage.append(found[2])
            continue
        held = ex.held_messages
        entry = None if before is None or held else before.get(execution_id)
        if entry is None or not (entry[0] is ex or unchanged(ex, entry[0])):
            piece = fresh(repr(describe_execution(ex, rank)))
            given = repr(frozen_text(ex.input))  # an input's repr, made once for a frozen record
            entry = (ex, piece, (execution_id, ex.from_execution_id, ex.step_type, given))
        else:
            entry = (ex, entry[1], entry[2])
        unordered.append(entry[1])
        lineage.append(entry[2])
        if not held and settled(ex):
            memo.keep_settled(entry)
            continue
        record.executions[execution_id] = entry
        if isinstance(ex.task, asyncio.Task):
            owners[ex.task] = execution_id
        if running(ex):
            unordered.append(fresh(f"c {execution_id} {_task(ex.task)!r}"))
    return owners


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
    if texts is None:
        texts = pieces_for(start_input, symmetry)
    memo = texts.memo
    LIVE.memo = memo.pending = None
    try:
        parts, record = _canonical_parts(rt, outside, texts, memo.parent(sources))
    except Opaque:
        return None
    found = parts.ordered + parts.unordered
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
    memo.pending, LIVE.memo = record, memo
    return Keys(canonical, numbered, exact)
