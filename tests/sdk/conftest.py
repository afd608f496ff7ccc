"""Fixtures of the SDK tests."""

from __future__ import annotations

import pytest

from dexviz.sdk.codec import CodecRegistry


@pytest.fixture
def codecs() -> CodecRegistry:
    """A fresh registry with the built-in and automatic codecs only."""
    return CodecRegistry()
