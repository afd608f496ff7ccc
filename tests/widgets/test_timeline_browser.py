"""The Debugger's timeline text measured in a real browser: never below 9 px, narrow or wide.

The static snapshot (what nbconvert and GitHub show) is opened over file:// in Debian's
Chromium, driven by Playwright, at a narrow and a wide window; every timeline text's rendered
size is its computed font size times its coordinate system's screen scale. Skipped (by
tests/conftest.py) where Chromium or playwright is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dexviz.replay.focus import MIN_TEXT_PX
from dexviz.widgets import Debugger
from tests.chromium import CHROMIUM_ARGS, chromium_path
from tests.widgets.helpers import TOKEN
from tests.widgets.test_timeline_text import chain, reviews

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WINDOWS_PX = (420, 1600)
_TEXT_SIZES = """(box) => Array.from(box.querySelectorAll('svg text'))
    .filter((t) => t.textContent.trim() && t.getBBox().width > 0)
    .map((t) => { const m = t.getScreenCTM();
                  return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); })"""
_SCROLLS = "(box) => box.scrollWidth > box.clientWidth + 1"


def _measure(page_file: Path) -> dict[int, tuple[float, bool]]:
    """``{window width: (smallest timeline text px, whether the timeline scrolls)}``."""
    from playwright.sync_api import sync_playwright

    found: dict[int, tuple[float, bool]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            for width in WINDOWS_PX:
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(page_file.as_uri())
                box = page.locator(".dx-timeline").first
                sizes = box.evaluate(_TEXT_SIZES)
                assert sizes, f"no timeline text at {width} px"
                found[width] = (min(sizes), bool(box.evaluate(_SCROLLS)))
                page.close()
        finally:
            browser.close()
    return found


@pytest.mark.parametrize(("name", "debugger"), [
    ("chain-1", lambda: Debugger(chain(1))),
    ("chain-500", lambda: Debugger(chain(500))),
    ("reviews-166", lambda: Debugger(reviews(166), token_channel=TOKEN)),
])
def test_the_snapshot_timeline_text_is_at_least_nine_pixels(name, debugger, tmp_path):
    page_file = tmp_path / f"{name}.html"
    debugger().snapshot(page_file)
    measured = _measure(page_file)
    for width, (smallest, _) in measured.items():
        assert smallest >= MIN_TEXT_PX - 0.01, f"{name} at {width} px: {smallest:.2f} px"
    assert measured[WINDOWS_PX[0]][1], "a narrow window scrolls the timeline instead"
    assert not measured[WINDOWS_PX[1]][1], "a wide window shows it whole"


@pytest.mark.requires_dot
def test_the_replay_page_timeline_text_is_at_least_nine_pixels(tmp_path):
    page_file = Debugger(reviews(16), token_channel=TOKEN).to_html(tmp_path / "replay.html")
    for width, (smallest, _) in _measure(page_file).items():
        # The replay page puts the timeline in the graph's column: narrower, so it scrolls.
        assert smallest >= MIN_TEXT_PX - 0.01, f"replay at {width} px: {smallest:.2f} px"
