"""Worker processes that keep the snapshots they take: ``explore(workers=N)``'s expander.

Shipping a state's snapshot between processes costs more than expanding it (pickling the
whole engine state, then unpickling it instead of copying it). So each worker keeps the
snapshots of the states it reached, and the search sends it only their names
(``SnapshotRef``): every state goes back to the worker that holds its snapshot, where restoring
is a copy. A state held in the searching process (the first levels, expanded there while they
are small) or by no snapshot goes to the least loaded worker with its snapshot, which the
worker re-takes once with its own engine. When affinity leaves a worker much more than its
share of a level, the tail of its part moves to the others, each snapshot shipped once
(``moves``). After each level the workers forget the snapshots no state of the next level
needs, and learn the fingerprints the others found (no snapshot is taken of a state seen).
The Dask expander (``explore.parallel``) runs the same worker side (``HeldExpander``).

Expansions come back in the level's order, so the search's results do not depend on which
worker expanded what.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from dexviz.engine.engine_state import SnapshotError
from dexviz.explore.schedule_records import Resume, Setup
from dexviz.explore.stateful import Expansion, LocalExpander, SnapshotRef, StateHandle

__all__ = [
    "MIN_PARALLEL", "AffinePool", "HeldExpander", "moves", "partition", "rebalance",
    "stays_here", "to_forget",
]

MIN_PARALLEL = 8
"""Levels smaller than this per worker, while no worker holds a state, stay in this process."""


@dataclass
class _Worker:
    """A worker process's end of the pipe, and its process."""

    number: int
    conn: Connection
    process: Any


class _Held:
    """A worker's snapshots, each named once (``SnapshotRef``) for the search to send back."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.snapshots: dict[int, Resume] = {}
        self.refs: dict[int, SnapshotRef] = {}
        self.counter = 0

    def ref(self, base: Resume) -> SnapshotRef:
        """The name of ``base``, a new one when it has none yet."""
        ref = self.refs.get(id(base))
        if ref is None:
            self.counter += 1
            self.snapshots[self.counter] = base
            ref = self.refs[id(base)] = SnapshotRef(self.number, self.counter, base.depth)
        return ref

    def named(self, handle: StateHandle) -> StateHandle:
        """``handle`` with its snapshot named (to send), or as it is."""
        base = handle.base
        if not isinstance(base, Resume):
            return handle
        return dataclasses.replace(handle, base=self.ref(base))

    def resolved(self, handle: StateHandle) -> StateHandle:
        """``handle`` with a named snapshot replaced by the snapshot (to restore)."""
        base = handle.base
        if not isinstance(base, SnapshotRef):
            return handle
        found = self.snapshots[base.number]
        self.refs[id(found)] = base
        return dataclasses.replace(handle, base=found)

    def keep(self, numbers: set[int]) -> None:
        """Forget every snapshot but ``numbers``."""
        for number in set(self.snapshots) - numbers:
            found = self.snapshots.pop(number)
            self.refs.pop(id(found), None)


class HeldExpander:
    """A worker's side of an affine pool: its engine, its snapshots, and the states it knows.

    ``known`` holds the fingerprints of every successor this worker returned and those the
    search forwarded from other workers: each is in the search's seen-set by the time it
    sends the next batch, so a successor reaching one is not snapshotted (it will not be
    expanded), as the searching process skips them.
    """

    def __init__(self, number: int, setup: Setup) -> None:
        self.local = LocalExpander(setup)
        self.held = _Held(number)
        self.known: set[str] = set()
        self.local.known = self.known.__contains__

    def forget(self, numbers: set[int], fingerprints: Sequence[str]) -> None:
        """Keep only snapshots ``numbers``; learn ``fingerprints`` (seen by the search)."""
        self.held.keep(numbers)
        self.known.update(fingerprints)

    def export(self, handles: Sequence[StateHandle]) -> list[StateHandle]:
        """``handles`` with the snapshots they name, to be expanded by another worker."""
        return [self.held.resolved(h) for h in handles]

    def _adopted(self, handle: StateHandle, adopted: dict[int, Resume]) -> StateHandle:
        """``handle`` with a snapshot sent from elsewhere re-taken by this worker's engine.

        A snapshot read back from a pickle is unpickled on every restore; one this engine
        took is copied. States sent here (and their descendants that cannot be snapshotted,
        which keep its base) are restored many times, so the snapshot is re-taken once.
        """
        base = handle.base
        if not isinstance(base, Resume) or id(base) in self.held.refs:
            return handle
        own = adopted.get(id(base))
        if own is None:
            engine = self.local.bench.engine
            try:
                engine.restore(base.snapshot)
                own = dataclasses.replace(base, snapshot=engine.snapshot())
            except SnapshotError:
                own = base
            adopted[id(base)] = own
        return dataclasses.replace(handle, base=own)

    def expand(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """The expansions of ``handles``, their snapshots named."""
        held = self.held
        adopted: dict[int, Resume] = {}
        resolved = [self._adopted(held.resolved(h), adopted) for h in handles]
        out = []
        for expansion in self.local.expand_all(resolved):
            successors = tuple(
                dataclasses.replace(s, handle=held.named(s.handle)) for s in expansion.successors
            )
            self.known.update(s.fingerprint for s in successors if s.fingerprint is not None)
            handle = held.named(expansion.handle)
            out.append(dataclasses.replace(expansion, handle=handle, successors=successors))
        return out


def _serve(number: int, setup: Setup, conn: Connection) -> None:
    """A worker's loop: expand batches, keep the snapshots taken, forget what is not needed."""
    side = HeldExpander(number, setup)
    while True:
        op, payload = conn.recv()
        if op == "stop":
            return
        if op == "keep":
            side.forget(*payload)
            continue
        if op == "export":
            conn.send(side.export(payload))
            continue
        conn.send(side.expand(payload))


def partition(handles: Sequence[StateHandle], workers: int) -> list[list[int]]:
    """The indices of ``handles`` each worker expands: a named snapshot's at its holder.

    The others (held here or by no snapshot) go to the least loaded worker, in order.
    """
    parts: list[list[int]] = [[] for _ in range(workers)]
    for index, handle in enumerate(handles):
        base = handle.base
        if isinstance(base, SnapshotRef):
            parts[base.worker].append(index)
        else:
            min(parts, key=len).append(index)
    return parts


BALANCE_SLACK = 1.15
"""A worker may get this much more than an even share of a level before states move away."""


def moves(parts: Sequence[Sequence[int]]) -> list[tuple[int, int, list[int]]]:
    """States to move so no worker has much more than its share: (from, to, indices).

    Affinity alone can leave one worker with every state (the descendants of the few states
    the first levels snapshotted there); a moved state takes its snapshot along, once.
    """
    total = sum(map(len, parts))
    share = -(-total // len(parts))
    if max(map(len, parts)) <= share * BALANCE_SLACK:
        return []
    spare = [list(p[share:]) for p in parts]
    out = []
    for target, part in enumerate(parts):
        room = share - len(part)
        for source, extra in enumerate(spare):
            if room <= 0:
                break
            if extra:
                taken, spare[source] = extra[:room], extra[room:]
                out.append((source, target, taken))
                room -= len(taken)
    return out


def rebalance(
    handles: Sequence[StateHandle],
    parts: list[list[int]],
    export: Callable[[int, list[StateHandle]], list[StateHandle]],
) -> Sequence[StateHandle]:
    """``handles`` with the states ``moves`` plans carrying their snapshots; ``parts`` updated.

    ``export(worker, handles)``: those handles with the snapshots ``worker`` holds for them.
    """
    planned = moves(parts)
    if not planned:
        return handles
    out = list(handles)
    for source, target, indices in planned:
        named = [i for i in indices if isinstance(handles[i].base, SnapshotRef)]
        if named:
            exported = export(source, [handles[i] for i in named])
            for index, handle in zip(named, exported, strict=True):
                out[index] = handle
        moved = set(indices)
        parts[source] = [i for i in parts[source] if i not in moved]
        parts[target] = sorted(parts[target] + indices)
    return out


def stays_here(handles: Sequence[StateHandle], workers: int) -> bool:
    """Whether a level is small and held by no worker: expanding it here is cheaper."""
    return len(handles) < MIN_PARALLEL * workers and not any(
        isinstance(h.base, SnapshotRef) for h in handles
    )


def to_forget(
    expansions: Sequence[Expansion | None], parts: Sequence[Sequence[int]]
) -> list[tuple[set[int], list[str]]]:
    """For each worker: the snapshots the next level may need, and the others' fingerprints.

    ``parts``: which worker expanded which of ``expansions``.
    """
    keep: list[set[int]] = [set() for _ in parts]
    found: list[list[str]] = [[] for _ in parts]
    for worker, indices in enumerate(parts):
        for index in indices:
            expansion = expansions[index]
            for successor in expansion.successors if expansion is not None else ():
                base = successor.handle.base
                if isinstance(base, SnapshotRef):
                    keep[base.worker].add(base.number)
                if successor.fingerprint is not None:
                    found[worker].append(successor.fingerprint)
    return [
        (numbers, [f for other, fs in enumerate(found) if other != worker for f in fs])
        for worker, numbers in enumerate(keep)
    ]


class AffinePool:
    """Expands levels on ``workers`` processes, each state where its snapshot is."""

    def __init__(self, setup: Setup, workers: int) -> None:
        self.workers = workers
        self._local = LocalExpander(setup)
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._pool: list[_Worker] = []
        for number in range(workers):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(number, setup, theirs), daemon=True)
            process.start()
            self._pool.append(_Worker(number, mine, process))

    def expand_all(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """The level's expansions, in order."""
        if stays_here(handles, len(self._pool)):
            return self._local.expand_all(handles)
        parts = partition(handles, len(self._pool))
        handles = rebalance(handles, parts, self._export)
        for worker, indices in zip(self._pool, parts, strict=True):
            worker.conn.send(("expand", [handles[i] for i in indices]))
        out: list[Expansion | None] = [None] * len(handles)
        for worker, indices in zip(self._pool, parts, strict=True):
            for index, expansion in zip(indices, worker.conn.recv(), strict=True):
                out[index] = expansion
        for worker, forget in zip(self._pool, to_forget(out, parts), strict=True):
            worker.conn.send(("keep", forget))
        return [e for e in out if e is not None]

    def _export(self, source: int, handles: list[StateHandle]) -> list[StateHandle]:
        conn = self._pool[source].conn
        conn.send(("export", handles))
        exported: list[StateHandle] = conn.recv()
        return exported

    def close(self) -> None:
        """Stop the worker processes."""
        for worker in self._pool:
            try:
                worker.conn.send(("stop", None))
            except (BrokenPipeError, OSError):
                pass
        for worker in self._pool:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.terminate()
