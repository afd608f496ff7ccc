"""UUID text without the uuid module: the same strings as ``uuid.UUID``."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from dexviz.engine.uuids import uuid4_bits, uuid_text


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_uuid_text_matches_the_uuid_module(value: int) -> None:
    assert uuid_text(value) == str(uuid.UUID(int=value))
    assert uuid_text(uuid4_bits(value)) == str(uuid.UUID(int=value, version=4))


def test_edges() -> None:
    for value in (0, 2**128 - 1, random.Random(1).getrandbits(128)):
        assert uuid_text(value) == str(uuid.UUID(int=value))
