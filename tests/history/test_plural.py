"""Counted nouns: ``1 holding``, ``8 holdings``, and the irregular plurals a caller names."""

from __future__ import annotations

import pytest

from dexviz.history._plural import plural


def test_plural_counts_take_the_form_their_count_needs():
    assert [plural(n, "holding") for n in (0, 1, 2)] == ["0 holdings", "1 holding", "2 holdings"]


def test_plural_keeps_the_words_before_the_noun():
    assert plural(1, "more overlapping pair") == "1 more overlapping pair"
    assert plural(21, "more overlapping pair") == "21 more overlapping pairs"


@pytest.mark.parametrize(("count", "expected"), [(1, "1 body"), (0, "0 bodies"), (3, "3 bodies")])
def test_plural_uses_the_named_plural_of_an_irregular_noun(count, expected):
    assert plural(count, "body", "bodies") == expected
