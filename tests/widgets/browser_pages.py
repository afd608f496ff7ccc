"""Test support for the static browser tests: open HTML in Chromium and measure it.

Debian's Chromium, driven by Playwright (never ``playwright install``); pages are opened over
``file://``. The tests using it are marked ``browser`` (skipped where either is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.chromium import CHROMIUM_ARGS, chromium_path


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright ``Browser``), closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def measure(browser: Any, html: str, path: Path, width: int, script: str) -> Any:
    """Write ``html`` to ``path``, open it ``width`` px wide, and return ``script``'s value.

    The page's body is exactly ``width`` px wide (an output area of that width).
    """
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 1000})
    try:
        page.goto(path.as_uri())
        page.add_style_tag(content="body { margin: 0; }")
        return page.evaluate(script)
    finally:
        page.close()


def in_output(fragments: list[str], width: int) -> str:
    """A page with ``fragments`` one after another in an output area ``width`` px wide."""
    body = "".join(f'<div class="jp-OutputArea-output" style="width:{width}px">{f}</div>'
                   for f in fragments)
    return f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{body}</body></html>'


def each(browser: Any, make: Callable[[int], str], path: Path, widths: tuple[int, ...],
         script: str) -> dict[int, Any]:
    """``{width: script's value}`` for the page ``make(width)`` at each width."""
    return {width: measure(browser, make(width), path, width + 40, script) for width in widths}
