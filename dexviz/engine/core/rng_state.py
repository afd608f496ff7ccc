"""The state of a simulation's random sources, read and put back for snapshots.

A snapshot reads the Mersenne Twister state of two ``random.Random`` objects (the choice
source and the id source) and a restore puts it back. ``Random.getstate()`` builds a tuple of
625 ints, about 8 µs each time: a third of a snapshot-and-restore's budget. On CPython the
generator's position and words sit in the object right after its header, so they are read and
written there as one block of bytes through a ``ctypes`` view (about 0.5 µs). That layout is
checked once, on probe generators, against ``getstate()`` and ``setstate()`` before it is ever
used; on another interpreter or layout every state goes through ``getstate``/``setstate``.

The bytes never leave the process: :func:`portable` turns a state into the ``getstate()``
tuple, which is what a pickled snapshot holds, and :func:`write` accepts either form.
"""

from __future__ import annotations

import _random
import random
import struct
import sys
from typing import Any

_OFFSET = object.__basicsize__
"""Where ``RandomObject``'s fields start: right after the object header."""
_WORDS = 624
_LAYOUT = struct.Struct(f"=i{_WORDS}I")
"""``int index; uint32_t state[624];``, the fields of CPython's ``RandomObject``."""

_view: Any = None
"""The ``ctypes`` array type over those fields, once checked; False when it cannot be used."""


def _checked_view() -> Any:
    """The array type, if the fields are where this module expects them (checked once)."""
    global _view
    if _view is None:
        _view = _probe()
    return _view


def _probe() -> Any:
    if sys.implementation.name != "cpython" or _random.Random.__basicsize__ < (
        _OFFSET + _LAYOUT.size
    ):
        return False
    import ctypes

    view = ctypes.c_char * _LAYOUT.size
    probe, other = random.Random("dexviz-probe"), random.Random(7)
    probe.random()
    raw = view.from_address(id(probe) + _OFFSET).raw
    if _words(raw) != probe.getstate()[1]:
        return False
    view.from_address(id(probe) + _OFFSET).raw = view.from_address(id(other) + _OFFSET).raw
    if probe.getstate()[1] != other.getstate()[1] or probe.random() != other.random():
        return False
    return view


def _words(raw: bytes) -> tuple[int, ...]:
    """``getstate()``'s internal tuple (the words, then the position) from the raw fields."""
    index, *words = _LAYOUT.unpack(raw)
    return (*words, index)


def read(rng: random.Random) -> tuple[Any, ...]:
    """``rng``'s state now: the raw fields and the spare Gaussian, or ``getstate()``."""
    if type(rng) is random.Random:
        view = _view if _view is not None else _checked_view()
        if view:
            return (view.from_address(id(rng) + _OFFSET).raw, rng.gauss_next)  # type: ignore[attr-defined]
    return rng.getstate()


def write(rng: random.Random, state: tuple[Any, ...]) -> None:
    """Put ``rng`` back at ``state`` (from :func:`read` or :func:`portable`)."""
    if type(state[0]) is bytes:
        view = _checked_view()
        assert view and type(rng) is random.Random, "a raw state stays with CPython's Random"
        view.from_address(id(rng) + _OFFSET).raw = state[0]
        rng.gauss_next = state[1]  # type: ignore[attr-defined]
    else:
        rng.setstate(state)


def portable(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """``state`` as ``Random.getstate()`` gives it (for pickling)."""
    if type(state[0]) is bytes:
        return (random.Random.VERSION, _words(state[0]), state[1])
    return state
