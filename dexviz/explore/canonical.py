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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.runtime import Runtime
from dexviz.explore.canonical_text import Pieces, pieces_for
from dexviz.explore.coroutines import CoroutineOpaque, describe_callback, describe_task
from dexviz.explore.fingerprint import (
    RUN_NAMES,
    RUN_SKIPPED,
    Fields,
    Opaque,
    describe_execution,
    describe_messages,
    faults_left,
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


def _described(ex: Any, rank: dict[int, int]) -> str:
    if ex.held_messages:
        return repr(describe_execution(ex, rank))
    return _DESCRIBED.text(ex, lambda e: repr(describe_execution(e, rank)))


def _canonical_parts(rt: Runtime, outside: Sequence[Any]) -> _Parts:
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
    for ex in run.executions.values():
        parts.unordered.append(_described(ex, rank))
        parts.lineage.append((ex.execution_id, ex.from_execution_id, ex.step_type, repr(ex.input)))
        if isinstance(ex.task, asyncio.Task):
            owners[ex.task] = ex.execution_id
        if running(ex):
            parts.unordered.append(f"c {ex.execution_id} {_task(ex.task)!r}")
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
    rt: Runtime, outside: Sequence[Any], start_input: Any, symmetry: Symmetry | None = None
) -> Keys | None:
    """The digest of the state up to execution numbering (and ``symmetry``), or None.

    Executions are named by lineage (``_names``), not by ``Type-N``; the executions, waiters,
    ready units, timers and held locks are compared as sets, so the order in which executions
    were created is not part of the state; the start input (the same in every state) is one
    marker, so that a symmetry permuting its values leaves it alone. A suspended coroutine
    handler is described by its frames (``explore.coroutines``). None when a part cannot be
    described soundly.
    """
    try:
        parts = _canonical_parts(rt, outside)
    except Opaque:
        return None
    texts = pieces_for(start_input, symmetry)
    found = texts.of((*parts.ordered, *parts.unordered))
    if found is None:
        return None
    lineage = [(e, p, t, texts.piece(i)) for e, p, t, i in parts.lineage]
    cut = len(parts.ordered)

    def digest(rename: dict[str, str]) -> str:
        names = _names(lineage, rename, texts)
        done = [texts.renamed(texts.moved(piece, rename), names) for piece in found]
        return _digest("\x00".join(done[:cut]) + "\x01" + "\x00".join(sorted(done[cut:])))

    numbered = digest({})
    canonical = numbered if symmetry is None else digest(texts.roles(found))
    return Keys(canonical, numbered, _digest("\x00".join(p.text for p in found)))
