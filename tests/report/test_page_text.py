"""Hostile text in a history reaches the replay page safely (issue: report text).

A lone surrogate is drawn as U+FFFD instead of failing the page, bidi controls are shown
escaped instead of reversing what a reader sees, and a 10 MiB error message is cut wherever it
appears, so the page stays a small multiple of the history.
"""

from __future__ import annotations

from dexviz.history import History
from dexviz.report import report_html
from dexviz.report.text import TEXT_LIMIT, safe_history, safe_text
from tests.report.pages import edited
from tests.widgets.helpers import history


def test_a_lone_surrogate_is_drawn_as_the_replacement_character(empty_path):
    events = edited(history(2), "AttemptFailed", error_message="bad \ud800 byte")
    page = report_html(events)
    page.encode("utf-8")  # the page is valid UTF-8
    assert "bad \ufffd byte" in page


def test_bidi_controls_are_shown_escaped_not_obeyed(empty_path):
    events = edited(history(2), "AttemptFailed", error_message="invoice\u202egpj.exe")
    page = report_html(events)
    assert "\u202e" not in page
    assert "invoice&lt;U+202E&gt;gpj.exe" in page or "invoice<U+202E>gpj.exe" in page


def test_a_ten_mebibyte_error_message_is_cut_everywhere_it_appears(empty_path):
    message = "x" * (10 << 20)
    events = edited(history(2), "AttemptFailed", error_message=message)
    size = len(events.to_jsonl())
    page = report_html(events)
    assert len(page) < 2 * size // 10  # far below the history (it was 4x: 8 copies)
    assert "x" * (TEXT_LIMIT + 1) not in page
    assert f"({len(message) - TEXT_LIMIT:,} more characters)" in page


def test_safe_text_leaves_ordinary_text_and_histories_alone():
    assert safe_text("EnterContractEdit-4 → ok") == "EnterContractEdit-4 → ok"
    assert safe_text("a\u2066b\u2069") == "a<U+2066>b<U+2069>"
    events = history(2)
    assert safe_history(events) is events
    assert isinstance(safe_history(events), History)
