"""The cyclic garbage collector while a stateful search runs: a larger young generation.

A search keeps its frontier's snapshots alive (hundreds of thousands of objects) and makes
and drops a state's worth of objects per transition. At Python's default young threshold
(700 allocations) the collector runs hundreds of young passes per thousand transitions, and
every tenth of the middle passes may become a full pass over every snapshot kept: on the
seed Flow a sixth of the search's CPU time, a quarter with five reviewers. With a young
generation of ``YOUNG`` objects, and ``MIDDLE`` young passes to a middle one, the passes are
far fewer and the full ones rare, while the reference cycles of dropped snapshots and
coroutines are still collected (reference counting frees the rest at once, and a full pass
still waits for the old generation to grow by a quarter, as ever); results never depend on
when it runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MIDDLE", "YOUNG", "young_generation"]

YOUNG = 10_000
"""The young generation's threshold during a search (Python's default is 700)."""
MIDDLE = 50
"""Young passes to a middle one during a search (Python's default is 10)."""


@contextmanager
def young_generation(young: int = YOUNG, middle: int = MIDDLE) -> Iterator[None]:
    """Raise the collector's first two thresholds inside the block, then restore all three.

    A threshold set higher already is left as it is, and so is a collector turned off
    (a young threshold of 0).
    """
    before = gc.get_threshold()
    if before[0]:
        gc.set_threshold(max(before[0], young), max(before[1], middle), *before[2:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
