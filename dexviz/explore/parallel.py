"""Expanding the stateful search's levels on several processes or on a Dask cluster.

Each level of the breadth-first search is a list of independent states; an expander splits it
into batches, expands the batches where it can (worker processes, Dask workers) and returns the
expansions in the level's order. The search merges them in that order, so the verdict, the
counts and the counterexample are the same as with one process.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dexviz.explore.affine_pool import AffinePool
from dexviz.explore.schedule_records import Setup
from dexviz.explore.stateful import Expander, Expansion, LocalExpander, StateHandle

__all__ = [
    "BATCHES_PER_WORKER", "DaskExpander", "default_workers", "expander_for",
]

BATCHES_PER_WORKER = 4
"""A level is cut into this many batches per worker: enough to balance uneven states."""
MIN_PARALLEL = 8
"""Levels smaller than this per worker are expanded in this process (shipping costs more)."""

def default_workers() -> int:
    """The machine's cores (those this process may use): ``explore``'s default ``workers``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)


_BENCHES: dict[bytes, LocalExpander] = {}
"""On a Dask worker: one engine per exploration (keyed by its Setup's pickle), kept for the
worker's life so that batches after the first reuse it."""


def _expand_with(setup: Setup, handles: Sequence[StateHandle]) -> list[Expansion]:
    key = pickle.dumps(setup)
    local = _BENCHES.get(key)
    if local is None:
        _BENCHES.clear()  # one exploration at a time: the previous one is over
        local = _BENCHES[key] = LocalExpander(setup)
    return local.expand_all(handles)


def batches(handles: Sequence[StateHandle], workers: int) -> list[Sequence[StateHandle]]:
    """``handles`` cut into consecutive batches, about ``BATCHES_PER_WORKER`` per worker."""
    size = max(1, -(-len(handles) // (workers * BATCHES_PER_WORKER)))
    return [handles[i : i + size] for i in range(0, len(handles), size)]


class DaskExpander:
    """Expands levels on a Dask distributed cluster (``pip install dexviz[cluster]``)."""

    def __init__(self, setup: Setup, cluster: Any) -> None:
        try:
            from distributed import Client
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError(
                "explore(cluster=...) needs dask distributed: pip install 'dexviz[cluster]'"
            ) from error
        self._owned = not hasattr(cluster, "submit")
        self._client = Client(cluster) if self._owned else cluster  # type: ignore[no-untyped-call]
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))
        self._local = LocalExpander(setup)
        [self._setup] = self._client.scatter([setup], broadcast=True)

    def expand_all(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """The level's expansions, in order."""
        if len(handles) < MIN_PARALLEL * self.workers:
            return self._local.expand_all(handles)
        parts = batches(handles, self.workers)
        futures = self._client.map(_expand_with, [self._setup] * len(parts), parts, pure=False)
        out: list[Expansion] = []
        for part in self._client.gather(futures):
            out.extend(part)
        return out

    def close(self) -> None:
        """Release the Setup on the cluster; close the client if this expander opened it."""
        self._client.cancel([self._setup])
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
