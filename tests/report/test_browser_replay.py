"""The HTML replay in a real browser: Debian's Chromium, driven by Playwright, over file://.

The page is opened from disk with the network cut off (any request other than the file itself
fails the test). Next and the arrow keys change the panels and the highlighted node, the slider
and jump-to-kind move the cursor, and the console stays free of errors. Skipped (by
tests/conftest.py) where Chromium or playwright is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dexviz.report import write_report
from tests.chromium import CHROMIUM_ARGS, chromium_path
from tests.widgets.helpers import TOKEN, history

pytestmark = [pytest.mark.browser, pytest.mark.requires_dot, pytest.mark.slow]

SELECTED = "#dx-report [data-graph-key=l0] g.node.dx-selected"


class Page:
    """A replay page open in Chromium, with its console errors and outside requests."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []

    def index(self) -> int:
        return int(self.page.get_attribute("#dx-report", "data-index"))

    def selected(self) -> str:
        return str(self.page.locator(SELECTED).get_attribute("id"))

    def panel(self, name: str) -> str:
        return str(self.page.inner_html(f'#dx-report [data-panel="{name}"]'))


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(history(8), tmp_path_factory.mktemp("replay") / "run.html",
                        token_channel=TOKEN)


@pytest.fixture
def browser_page(report_file: Path) -> Iterator[Page]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1500, "height": 1000})
        page = context.new_page()
        opened = Page(page)
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: opened.errors.append(str(e)))

        def route(request: Any) -> None:
            if request.request.url != report_file.as_uri():
                opened.requests.append(request.request.url)
                request.abort()
            else:
                request.continue_()

        page.route("**/*", route)
        page.goto(report_file.as_uri())
        page.wait_for_selector("#dx-report.dx-js")
        try:
            yield opened
        finally:
            browser.close()
    assert opened.errors == [], opened.errors
    assert opened.requests == [], opened.requests


def test_the_page_opens_at_the_last_event_with_no_error_and_no_request(browser_page):
    last = len(history(8)) - 1
    assert browser_page.index() == last
    assert browser_page.selected() == "exec:__end__"
    assert browser_page.page.inner_text("#dx-counter") == f"{last + 1} / {last + 1}"


def test_next_changes_the_panels_and_the_highlighted_node(browser_page):
    page = browser_page.page
    page.click("#dx-first")
    assert browser_page.index() == 0
    assert browser_page.selected() == "exec:__start__"
    seen = {browser_page.panel("detail")}
    for _ in range(3):
        page.click("#dx-next")
        seen.add(browser_page.panel("detail"))
    assert browser_page.index() == 3
    assert len(seen) == 4  # each event has its own detail panel
    assert browser_page.selected() == "exec:StartContractEdits-1"
    assert "StepExecuteCompleted" in page.inner_text("#dx-heading")
    assert "go_to EnterContractEdit-1" in browser_page.panel("detail")
    before = browser_page.panel("channels")
    page.click("#dx-next")  # the start Step's publication of the token
    assert browser_page.panel("channels") != before
    assert "contractEditToken" in browser_page.panel("channels")
    assert page.is_disabled("#dx-prev") is False


def test_keyboard_arrows_home_and_end_move_the_cursor(browser_page):
    page = browser_page.page
    page.keyboard.press("Home")
    assert browser_page.index() == 0
    assert page.is_disabled("#dx-prev")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert browser_page.index() == 2
    page.keyboard.press("ArrowLeft")
    assert browser_page.index() == 1
    page.keyboard.press("End")
    assert browser_page.index() == len(history(8)) - 1
    assert page.is_disabled("#dx-next")


def test_jump_to_kind_slider_and_event_list_move_the_cursor(browser_page):
    page = browser_page.page
    events = history(8)
    page.keyboard.press("Home")
    page.select_option("#dx-kind", "AttemptFailed")
    page.click("#dx-find-next")
    first_failure = next(i for i, e in enumerate(events) if str(e.kind) == "AttemptFailed")
    assert browser_page.index() == first_failure
    assert "ContractEditError" in browser_page.panel("detail")
    page.fill("#dx-slider", "10")
    page.dispatch_event("#dx-slider", "input")
    assert browser_page.index() == 10
    page.click('#dx-report .dx-eventlist li[data-i="20"]')
    assert browser_page.index() == 20
    assert page.get_attribute('.dx-eventlist li[data-i="20"]', "class") == "dx-current"


def test_the_definition_graph_highlights_the_selected_step(browser_page):
    page = browser_page.page
    page.click('[data-show-graph="definition"]')
    assert page.is_visible("[data-graph-key=d]")
    assert not page.is_visible("[data-graph-key=l0]")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    selected = page.locator("[data-graph-key=d] g.node.dx-selected").get_attribute("id")
    assert selected == "step:StartContractEdits"


def test_without_javascript_the_page_is_the_static_last_event(report_file: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(java_script_enabled=False).new_page()
            page.goto(report_file.as_uri())
            assert not page.is_visible("#dx-next")  # controls need the script
            assert page.is_visible("[data-graph-key=l0]") and page.is_visible(
                "[data-graph-key=d]")
            assert page.locator(SELECTED).get_attribute("id") == "exec:__end__"
            assert "COMPLETED" in page.inner_text("#dx-heading")
        finally:
            browser.close()


def test_a_time_traveled_flow_shows_the_graph_and_timeline_of_the_events_run(tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.report.test_replay_matches_widget import _time_traveled

    path = write_report(_time_traveled(), tmp_path / "forked.html", token_channel=TOKEN)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_selector("#dx-report.dx-js")
            visible = "#dx-report .dx-graph-section:not([hidden])"
            assert page.get_attribute(visible, "data-run") == "1"  # the last event's run
            assert page.is_visible('.dx-timeline-section[data-run="1"]')
            page.keyboard.press("Home")
            assert page.get_attribute(visible, "data-run") == "0"
            assert page.is_visible('.dx-timeline-section[data-run="0"]')
            assert not page.is_visible('.dx-timeline-section[data-run="1"]')
            assert errors == []
        finally:
            browser.close()
