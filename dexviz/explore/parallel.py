"""Expanding the stateful search's levels on several processes or on a Dask cluster.

Each level of the breadth-first search is a list of independent states; an expander splits it
into one batch per worker (each state where its snapshot is, ``explore.affine_pool``), expands
the batches there (worker processes, Dask workers) and returns the expansions in the level's
order. The search merges them in that order, so the verdict, the
counts and the counterexample are the same as with one process.
"""

from __future__ import annotations

import os
import pickle
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dexviz.explore.affine_pool import (
    AffinePool,
    HeldExpander,
    partition,
    rebalance,
    stays_here,
    to_forget,
)
from dexviz.explore.caches import release_caches
from dexviz.explore.schedule_records import Setup
from dexviz.explore.search_gc import young_generation
from dexviz.explore.stateful import (
    Expander,
    Expansion,
    LocalExpander,
    StateHandle,
)

__all__ = [
    "DaskExpander", "default_workers", "expander_for",
]

def default_workers() -> int:
    """The machine's cores (those this process may use): ``explore``'s default ``workers``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)


_SIDES: dict[str, HeldExpander] = {}
"""On a Dask worker: the worker side of the exploration named by the key, kept for the
worker's life so that its snapshots stay where they were taken (``explore.affine_pool``)."""


def _packed(value: Any) -> bytes:
    """``value`` pickled once, as a Dask task's argument or result.

    Dask serializes a list element by element, each with its own header and frames, on the
    worker's event loop: for a batch of thousands of states or expansions that cost a third
    of the expanding thread's time. One bytes object is one frame.
    """
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _expand_on_worker(setup: Setup, token: str, number: int, batch: bytes) -> bytes:
    """A Dask task: worker ``number`` of exploration ``token`` expands a batch.

    ``batch``: the packed snapshots to forget and fingerprints to learn (or None) and the
    handles; returns their expansions, packed.
    """
    forget, handles = pickle.loads(batch)
    side = _SIDES.get(token)
    if side is None:
        _SIDES.clear()  # one exploration at a time: the previous one is over
        side = _SIDES[token] = HeldExpander(number, setup)
    if forget is not None:
        side.forget(*forget)
    # As in the searching process and the forked workers (which inherit it): a Dask worker
    # is its own process, started before the search, with the collector's default thresholds.
    with young_generation():
        return _packed(side.expand(handles))


def _export_on_worker(token: str, handles: Sequence[StateHandle]) -> list[StateHandle]:
    """A Dask task: ``handles`` with the snapshots this worker holds for them, to move."""
    return _SIDES[token].export(handles)


def _drop(token: str) -> None:
    """On each Dask worker at the end: forget the exploration's snapshots and engine."""
    _SIDES.pop(token, None)
    # The worker process lives on: its description caches would keep the snapshots alive.
    release_caches()


class DaskExpander:
    """Expands levels on a Dask distributed cluster (``pip install dexviz[cluster]``).

    Like the local ``AffinePool``: each Dask worker keeps the snapshots it takes, a state goes
    back to the worker holding its snapshot (a task pinned to it), and a level is one task
    per worker, so the scheduler's cost per level is a few messages, not one per state.
    """

    def __init__(self, setup: Setup, cluster: Any) -> None:
        try:
            from distributed import Client
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError(
                "explore(cluster=...) needs dask distributed: pip install 'dexviz[cluster]'"
            ) from error
        self._owned = not hasattr(cluster, "submit")
        self._client = Client(cluster) if self._owned else cluster  # type: ignore[no-untyped-call]
        self._addresses = sorted(self._client.scheduler_info().get("workers", {}))
        self.workers = max(1, len(self._addresses))
        self._local = LocalExpander(setup)
        self._token = uuid.uuid4().hex
        self._forget: list[tuple[set[int], list[str]] | None] = [None] * self.workers
        [self._setup] = self._client.scatter([setup], broadcast=True)

    def expand_all(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """The level's expansions, in order."""
        if not self._addresses or stays_here(handles, self.workers):
            return self._local.expand_all(handles)
        parts = partition(handles, self.workers)
        handles = rebalance(handles, parts, self._export)
        futures = [
            self._client.submit(
                _expand_on_worker, self._setup, self._token, number,
                _packed((self._forget[number], [handles[i] for i in indices])),
                workers=[address], allow_other_workers=False, pure=False,
            )
            for number, (address, indices) in enumerate(zip(self._addresses, parts, strict=True))
        ]  # fmt: skip
        out: list[Expansion | None] = [None] * len(handles)
        for indices, part in zip(parts, self._client.gather(futures, direct=True), strict=True):
            for index, expansion in zip(indices, pickle.loads(part), strict=True):
                out[index] = expansion
        self._forget = list(to_forget(out, parts))
        return [e for e in out if e is not None]

    def _export(self, source: int, handles: list[StateHandle]) -> list[StateHandle]:
        future = self._client.submit(
            _export_on_worker, self._token, handles, workers=[self._addresses[source]],
            allow_other_workers=False, pure=False,
        )  # fmt: skip
        exported: list[StateHandle] = future.result()
        return exported

    def close(self) -> None:
        """Release the Setup and the workers' snapshots; close the client if this opened it."""
        self._client.cancel([self._setup])
        if self._addresses:
            self._client.run(_drop, self._token)
        if self._owned:
            self._client.close()


@contextmanager
def expander_for(setup: Setup, workers: int, cluster: Any) -> Iterator[Expander]:
    """The expander ``workers`` and ``cluster`` ask for, closed afterwards."""
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    if cluster is not None:
        expander: DaskExpander | AffinePool = DaskExpander(setup, cluster)
    elif workers > 1:
        expander = AffinePool(setup, workers)
    else:
        yield LocalExpander(setup)
        return
    try:
        yield expander
    finally:
        expander.close()
