"""The HTML replay's compare mode in Chromium: both runs step together, the divergence shows.

The page (``dexviz report A --compare B``'s) is opened over file:// with every other request
refused; stepping run a swaps in the compare block at the aligned event, and the console stays
free of errors. Skipped (by tests/conftest.py) where Chromium or playwright is missing.
"""

from __future__ import annotations

import pytest

from dexviz.report import write_report
from tests.widgets.browser_pages import chromium
from tests.widgets.helpers import runs_differing_in_one_decision

pytestmark = [pytest.mark.browser, pytest.mark.requires_dot, pytest.mark.slow]

_SIDES = """() => Array.from(document.querySelectorAll('#dx-compare .dx-side')).map(
  (side) => side.querySelector('.dx-side-title').textContent + ' | ' +
            side.querySelector('.dx-side-title').nextElementSibling.textContent)"""


def test_stepping_run_a_steps_run_b_and_shows_the_divergence(tmp_path):
    recorded, changed = runs_differing_in_one_decision(tmp_path / "variants")
    path = write_report(recorded, tmp_path / "compare.html", compare=changed)
    decided = next(
        i
        for i, e in enumerate(recorded)
        if e.execution_id == "EditContract-3" and e.kind == "StepExecuteCompleted"
    )
    errors: list[str] = []
    refused: list[str] = []
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))

        def route(request):
            if request.request.url != path.as_uri():
                refused.append(request.request.url)
                request.abort()
            else:
                request.continue_()

        page.route("**/*", route)
        page.goto(path.as_uri())
        page.wait_for_selector("#dx-report.dx-js")
        page.keyboard.press("Home")
        first = page.evaluate(_SIDES)
        assert [side.split(" | ")[0] for side in first] == ["run a", "run b"]
        assert page.locator("#dx-compare .dx-diff-now").count() == 0
        page.keyboard.press("ArrowRight")
        assert page.evaluate(_SIDES) != first, "run b follows run a's cursor"
        page.click(f"#event-{decided}")
        assert page.get_attribute("#dx-report", "data-index") == str(decided)
        now = page.locator("#dx-compare .dx-diff-now")
        assert now.is_visible()
        assert "decision: go_to(SaveContractEdit) vs dead_end()" in now.inner_text()
        assert page.locator("#dx-compare .dx-differing .dx-here").count() == 1
        page.keyboard.press("End")
        assert page.get_attribute("#dx-report", "data-index") == str(len(recorded) - 1)
        assert page.locator("#dx-compare .dx-diff-now").count() == 0
        page.close()
    assert errors == [] and refused == [], (errors, refused)
