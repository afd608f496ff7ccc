"""UUID text without the uuid module: the same strings as ``uuid.UUID``."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from dexviz.engine.core.uuids import uuid4_bits, uuid_text


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_uuid_text_matches_the_uuid_module(value: int) -> None:
    assert uuid_text(value) == str(uuid.UUID(int=value))
    assert uuid_text(uuid4_bits(value)) == str(uuid.UUID(int=value, version=4))


def test_edges() -> None:
    for value in (0, 2**128 - 1, random.Random(1).getrandbits(128)):
        assert uuid_text(value) == str(uuid.UUID(int=value))


@given(st.integers(min_value=0, max_value=2**62), st.integers(min_value=0, max_value=2**32))
def test_message_ids_are_uuid7_of_engine_time_and_the_seeded_bits_r61(
    now_ms: int, seed: int
) -> None:
    from dexviz import Engine

    engine = Engine([], seed=seed)
    rt = engine._rt
    expected = random.Random(f"dexviz-run-ids:{seed}")
    for step in range(3):  # the time part is cached per millisecond: change it in between
        rt.scheduler.now_ns = (now_ms + step // 2) * 1_000_000
        r12, r62 = expected.getrandbits(12), expected.getrandbits(62)
        value = (now_ms + step // 2) % 2**48 << 80 | 7 << 76 | r12 << 64 | 2 << 62 | r62
        made = rt.message_id()
        assert made == str(uuid.UUID(int=value))
        assert uuid.UUID(made).version == 7
