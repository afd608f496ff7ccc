"""A snapshot's random sources: read and put back exactly, and pickled in getstate()'s form."""

from __future__ import annotations

import pickle
import random

from dexviz.engine.core import rng_state


def _draws(rng: random.Random) -> list[float]:
    return [rng.random() for _ in range(700)]  # past one regeneration of the 624 words


def test_a_state_read_and_written_back_replays_the_same_draws() -> None:
    rng = random.Random("reads")
    _draws(rng)
    rng.gauss(0, 1)  # leaves a spare Gaussian, part of the state
    state = rng_state.read(rng)
    expected = (_draws(rng), rng.gauss(0, 1))
    rng_state.write(rng, state)
    assert (_draws(rng), rng.gauss(0, 1)) == expected


def test_a_state_written_into_another_generator_makes_it_draw_the_same() -> None:
    source, target = random.Random(1), random.Random(2)
    _draws(source)
    rng_state.write(target, rng_state.read(source))
    assert _draws(target) == _draws(source)


def test_the_portable_form_is_getstate_and_is_accepted_back() -> None:
    rng = random.Random(11)
    _draws(rng)
    state = rng_state.read(rng)
    portable = rng_state.portable(state)
    assert portable == rng.getstate()
    assert pickle.loads(pickle.dumps(portable)) == portable
    expected = _draws(rng)
    rng_state.write(rng, portable)
    assert _draws(rng) == expected


def test_a_subclass_of_random_goes_through_getstate() -> None:
    class Counting(random.Random):
        pass

    rng = Counting(5)
    state = rng_state.read(rng)
    assert state == rng.getstate() and rng_state.portable(state) is state
    expected = _draws(rng)
    rng_state.write(rng, state)
    assert _draws(rng) == expected


def test_on_cpython_the_state_is_copied_as_raw_fields() -> None:
    import sys

    state = rng_state.read(random.Random(3))
    raw = sys.implementation.name == "cpython"
    assert (type(state[0]) is bytes) is raw
