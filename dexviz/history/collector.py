"""Pausing Python's cyclic garbage collector around work that allocates many lasting objects.

Engine runs, history folds and replays allocate many small objects that live on; the
collector's own schedule walks them again and again while they are made. Reference counting
still frees everything dropped; cycles are collected once the collector resumes. Stdlib only,
so the engine, the analysis folds and the tools share one implementation.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it after if it was enabled."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
