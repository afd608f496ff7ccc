"""Pausing Python's cyclic garbage collector around work that allocates many lasting objects.

Engine runs, history folds and replays allocate many small objects that all survive (events,
executions, payloads): the collector would scan each of them twice on its way to the oldest
generation without ever finding garbage (a quarter of a long run's time). Reference counting
still frees everything dropped; the rare reference cycles (a stored exception, say) are
collected once the collector resumes. Stdlib only, so the engine, the analysis folds and the
tools share one implementation.
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
