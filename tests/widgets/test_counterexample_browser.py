"""A counterexample's Debugger in a real browser: the measured section and a truthful verdict.

The static snapshot of ``ViolationRun.debugger()`` (BrokenContractEditFlow, ``exclusive``) is
opened over file:// in Debian's Chromium, driven by Playwright. Its timeline must show the
section the check measured (EnterContractEdit-1 is still inside: its SaveContractEdit-1 has not
run) and state the overlap, never "no two holders overlap" beside the violation. Skipped (by
tests/conftest.py) where Chromium or playwright is missing.
"""

from __future__ import annotations

import pytest

from tests.analysis.runs import TOKEN, broken_counterexample
from tests.widgets.browser_pages import chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_SEEN = """(box) => {
  const shown = (el) => { const r = el.getBoundingClientRect();
                          return r.width > 0 && r.height > 0 ? [r.width, r.height] : null; };
  const section = box.querySelector('[id="section:TOKEN:EnterContractEdit-1"]');
  const holding = box.querySelector('[id="holding:TOKEN:EnterContractEdit-1"]');
  const texts = Array.from(box.querySelectorAll('svg text'))
    .filter((t) => shown(t)).map((t) => t.textContent);
  return { section: section && shown(section), holding: holding && shown(holding), texts,
           page: document.documentElement.textContent };
}""".replace("TOKEN", TOKEN)


def test_a_counterexamples_debugger_shows_the_measured_section_and_the_overlap(tmp_path):
    run = broken_counterexample()
    page_file = tmp_path / "counterexample.html"
    run.debugger().snapshot(page_file)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(page_file.as_uri())
        seen = page.locator(".dx-timeline").first.evaluate(_SEEN)
        page.close()
    assert seen["section"] is not None, "the measured section is not drawn"
    width, height = seen["section"]
    # The section box stands out around the holding bar, across the whole run up to now.
    assert width > 200 and height > seen["holding"][1]
    assert any("2 holders overlap at t=2.000 s" in text for text in seen["texts"]), seen["texts"]
    assert "no two holders overlap" not in seen["page"]
