"""Take the README's picture of the one-file HTML replay, in Chromium.

Usage (from the repository root): ``.venv/bin/python scripts/report_screenshot.py
[--out docs/images/report-replay.png]``. It simulates the bundled contract-edit Flow (8
reviewers, seed 0), writes its replay with ``dexviz.report``, opens the file over ``file://`` in
Debian's Chromium driven by Playwright (nothing is downloaded; the network is refused), moves to
the first failed attempt with the page's own jump-to-kind control, and saves a screenshot.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dexviz import simulate  # noqa: E402 - after the path set-up above
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits  # noqa: E402
from dexviz.report import write_report  # noqa: E402

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def chromium() -> str:
    """The Chromium binary on PATH."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("report_screenshot: no Chromium on PATH (apt-get install chromium)")


def shoot(page_file: Path, out: Path) -> None:
    """Open ``page_file``, jump to the first failed attempt and save the screenshot."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url == page_file.as_uri() else route.abort())
            page.goto(page_file.as_uri())
            page.wait_for_selector("#dx-report.dx-js")
            page.keyboard.press("Home")
            page.select_option("#dx-kind", "AttemptFailed")
            page.click("#dx-find-next")
            page.screenshot(path=str(out))
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    """Write the replay of the contract-edit run and screenshot it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs/images/report-replay.png")
    args = parser.parse_args(argv)
    run = simulate(ContractEditFlow(), sample_edits(8), seed=0)
    with tempfile.TemporaryDirectory() as folder:
        page_file = write_report(run, Path(folder) / "run.html",
                                 token_channel="contractEditToken")
        shoot(page_file, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
