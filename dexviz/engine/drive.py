"""Drive: ``Engine.run``'s loop — the scheduler's pick and the unit inlined, then the commit.

:meth:`Runtime.run_unit` runs one unit with a fresh event list and the full commit cycle;
``Engine.run`` runs thousands in a row, so this loop does the same work without a call or a
list per unit in between: the seeded pick among ready units (the same random draws as
``Random.randrange``) and a queued first attempt handed straight to the fast path. Each unit
commits through :meth:`Runtime.commit`, the one place that decides which after-commit checks
run.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from dexviz.engine.core.choice import SeededChooser
from dexviz.engine.core.units import QueuedStart
from dexviz.history.event import Event
from dexviz.sdk.clock import handler_clock

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime

_SMALL = 1024
_BITS = [n.bit_length() for n in range(_SMALL)]
"""``n.bit_length()`` for the usual numbers of ready units (a lookup instead of a call)."""


def drive(
    rt: Runtime, produced: list[Event], max_units: int, stop: Callable[[Event], bool] | None
) -> bool:
    """Run up to ``max_units`` units as ``run_unit`` would, adding their events to ``produced``.

    Returns True once nothing is left to run or a unit committed an event ``stop`` accepts,
    False when ``max_units`` ran out first.
    """
    if rt.sim is None:
        raise RuntimeError("stepping is for simulation; a live engine runs on its own thread")
    recorder = rt.recorder
    # A handler that drives the engine (a Client wait inside a Step) nests units: the outer
    # unit's list gets these events too, as with run_unit.
    outer = recorder.produced
    recorder.produced = produced
    clock = handler_clock.set(rt.clock_millis)
    try:
        return _loop(rt, produced, max_units, stop)
    finally:
        handler_clock.reset(clock)
        recorder.produced = outer
        if outer is not None:
            outer.extend(produced)


def _loop(  # noqa: C901 - one function on purpose: it runs once per unit (see module doc)
    rt: Runtime, produced: list[Event], max_units: int, stop: Callable[[Event], bool] | None
) -> bool:
    sim = rt.sim
    assert sim is not None
    ready, timers = sim._ready, sim._timers
    chooser = sim.chooser
    # Random._randbelow_with_getrandbits, inlined for the seeded chooser: the same draws.
    seeded = type(chooser) is SeededChooser and type(chooser.rng) is random.Random
    getrandbits = chooser.rng.getrandbits if seeded else None  # type: ignore[attr-defined]
    start, recorder, lock, commit = rt.fast.start_unit, rt.recorder, rt.lock, rt.commit
    for _ in range(max_units):
        if not ready or (timers and timers[0].due_ns <= sim.now_ns):
            unit = sim.pop()
            if unit is None:
                return True
        else:
            n = len(ready)
            if n == 1:
                index = 0
            elif getrandbits is not None:
                bits = _BITS[n] if n < _SMALL else n.bit_length()
                index = getrandbits(bits)
                while index >= n:
                    index = getrandbits(bits)
            else:
                index = chooser.ready(ready)
            unit = ready[index]
            ready[index] = ready[-1]
            del ready[-1]
        mark = len(produced) if stop is not None else 0
        with lock:
            if type(unit) is QueuedStart:
                start(unit)
            else:
                unit()
            if recorder._pending:
                commit()
        if stop is not None and any(stop(e) for e in produced[mark:]):
            return True
    return False
