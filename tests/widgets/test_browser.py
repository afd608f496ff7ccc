"""A real browser drives the debugger widget in JupyterLab (ecosystem-notes §4).

JupyterLab (already in the ``notebook`` extra, so nothing else to install, and the front end
people actually use) serves a copy of ``debugger_browser.ipynb`` on 127.0.0.1 with a free port
and a token; Debian's Chromium, driven by Playwright (never ``playwright install``), opens it,
runs every cell, clicks Next three times and checks that the node highlighted in the lineage
graph's SVG changed. Skipped (by tests/conftest.py) where Chromium or playwright is missing.
Set ``DEXVIZ_SCREENSHOTS=<dir>`` to keep the screenshots.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import CHROMIUM_ARGS as CHROMIUM_FLAGS
from tests.chromium import chromium_path

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.notebook]

NOTEBOOK = Path(__file__).with_name("debugger_browser.ipynb")
DEFINITION_NOTEBOOK = Path(__file__).with_name("debugger_definition.ipynb")
MIN_TEXT_PX = 9.0
CHROMIUM_ARGS = [*CHROMIUM_FLAGS, "--disable-quic"]
START_TIMEOUT_S = 90
RUN_TIMEOUT_MS = 180_000
SELECTED = ".dexviz-debugger g.node.dx-selected"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - 127.0.0.1 only
            return int(response.status)
    except (urllib.error.URLError, OSError):
        return 0


def _request(url: str, method: str) -> None:
    try:
        urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10)  # noqa: S310
    except (urllib.error.URLError, OSError):
        pass


class Lab:
    """A JupyterLab server started for one test, and how to reach it."""

    def __init__(self, root: Path) -> None:
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"),
               "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces"),
               "JUPYTER_RUNTIME_DIR": str(root / ".runtime"), "PYTHONUNBUFFERED": "1"}
        self.log = (root / "jupyterlab.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
             "--ServerApp.allow_root=True", "--LabApp.news_url=None",
             "--LabApp.extension_manager=readonly",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)

    def url(self, path: str) -> str:
        """An URL on the server, with the token."""
        return f"{self.base}{path}?token={self.token}"

    def wait_ready(self) -> None:
        """Wait until the REST API answers."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.process.returncode}; "
                                   f"see {self.log.name}")
            if _get(self.url("/api/status")) == 200:
                return
            time.sleep(0.5)
        raise TimeoutError(f"JupyterLab did not answer within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        """Shut the server (and its kernels) down; kill it if it does not exit."""
        if self.process.poll() is None:
            _request(self.url("/api/shutdown"), "POST")
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    if importlib_missing("jupyterlab") or importlib_missing("ipywidgets"):
        pytest.skip("jupyterlab and ipywidgets are needed (pip install -e '.[notebook]')")
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    # Opened from a notebooks/ folder, as the tutorials are (the kernel runs there).
    (tmp_path / "notebooks").mkdir()
    shutil.copy(DEFINITION_NOTEBOOK, tmp_path / "notebooks" / DEFINITION_NOTEBOOK.name)
    server = Lab(tmp_path)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


def _shot(page: object, tmp_path: Path, name: str) -> None:
    folder = Path(os.environ.get("DEXVIZ_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)  # type: ignore[attr-defined]


def _open_and_run(page: object, lab: Lab, path: str = NOTEBOOK.name) -> None:
    page.goto(lab.url(f"/lab/tree/{path}"))  # type: ignore[attr-defined]
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=RUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
        timeout=RUN_TIMEOUT_MS)
    page.evaluate(  # type: ignore[attr-defined]
        "window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(SELECTED, timeout=RUN_TIMEOUT_MS)  # type: ignore[attr-defined]


def test_clicking_next_three_times_moves_the_highlight_in_the_svg(lab: Lab, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        try:
            _open_and_run(page, lab)
            selected = page.locator(SELECTED)
            before = selected.get_attribute("id")
            readout = page.locator(".dexviz-debugger .widget-readout").first
            next_button = page.locator(".dexviz-debugger button", has_text="Next")
            for clicks in range(1, 4):
                next_button.click()
                page.wait_for_function(
                    "([sel, want]) => document.querySelector(sel)?.textContent.trim() === want",
                    arg=[".dexviz-debugger .widget-readout", str(clicks)], timeout=30_000)
            page.wait_for_function(
                "([sel, old]) => document.querySelector(sel)?.id !== old",
                arg=[SELECTED, before], timeout=30_000)
            page.wait_for_function(  # the heading is redrawn after the slider's readout
                "([sel, want]) => document.querySelector(sel)?.innerText.includes(want)",
                arg=[".dexviz-debugger .dx-heading", "event 4 /"], timeout=30_000)
            page.wait_for_function(  # and the detail panel, which may be redrawn after it
                "([sel, want]) => document.querySelector(sel)?.innerText.includes(want)",
                arg=[".dexviz-debugger .dx-detail", "#4 "], timeout=30_000)
            after = selected.get_attribute("id")
            # The bundle's static snapshot is for kernel-less renderers; Lab shows the widget.
            static_shown = page.locator(".dexviz-debugger.dx-static").count()
            heading = page.locator(".dexviz-debugger .dx-heading").inner_text()
            detail = page.locator(".dexviz-debugger .dx-detail").inner_text()
            _shot(page, tmp_path, "debugger-after-next.png")
            narrow = _narrow_timeline(page)
            # In the narrow window the panels wrap under the graph: its buttons stay clickable.
            lanes = _lanes_before_and_after_focus(page)
            focused_smallest = min(page.locator(".dexviz-debugger .dx-timeline").first.evaluate(
                _TEXT_SIZES))
        except Exception:
            _shot(page, tmp_path, "debugger-failure.png")
            raise
        finally:
            browser.close()
    assert readout is not None
    assert static_shown == 0
    assert before == "exec:__start__"
    assert after == "exec:StartContractEdits-1"
    assert "event 4 /" in heading and "StepExecuteCompleted" in heading
    assert "go_to EnterContractEdit-1" in detail  # the start Step's fan-out decision
    smallest, scrolls, overflow = narrow
    assert smallest >= MIN_TEXT_PX - 0.01, f"smallest timeline text {smallest:.2f} px"
    assert scrolls and overflow <= 1  # the timeline scrolls; the debugger fits its output
    whole, focused = lanes
    assert focused_smallest >= MIN_TEXT_PX - 0.01, focused_smallest
    # At event 4 StartContractEdits-1 is selected: Focus keeps it and the Steps it started.
    assert "StartContractEdits-1" in focused and len(focused) < len(whole), lanes


_LANES = """(box) => Array.from(new Set(Array.from(box.querySelectorAll('svg g[id^="lane:"]'))
    .map((g) => g.id.split(':')[1])))"""


def _lanes_before_and_after_focus(page: object) -> tuple[list[str], list[str]]:
    """The timeline's lanes, then again after the Focus button redrew it."""
    box = page.locator(".dexviz-debugger .dx-timeline").first  # type: ignore[attr-defined]
    whole = box.evaluate(_LANES)
    page.locator(".dexviz-debugger button", has_text="Focus").first.click()  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        f"(n) => ({_LANES})(document.querySelector('.dexviz-debugger .dx-timeline')).length < n",
        arg=len(whole), timeout=30_000)
    return whole, page.locator(  # type: ignore[attr-defined]
        ".dexviz-debugger .dx-timeline").first.evaluate(_LANES)


def _narrow_timeline(page: object) -> tuple[float, bool, float]:
    """In a 700 px window: the smallest timeline text (px), whether the timeline scrolls, and
    how far the debugger sticks out of its output area (px)."""
    page.set_viewport_size({"width": 700, "height": 1200})  # type: ignore[attr-defined]
    box = page.locator(".dexviz-debugger .dx-timeline").first  # type: ignore[attr-defined]
    box.wait_for(timeout=30_000)
    page.wait_for_timeout(500)  # type: ignore[attr-defined]  # Lab lays out after a resize
    sizes = box.evaluate(_TEXT_SIZES)
    scrolls = box.evaluate("(b) => b.scrollWidth > b.clientWidth + 1")
    overflow = page.locator(".jp-OutputArea-output").filter(  # type: ignore[attr-defined]
        has=page.locator(".dexviz-debugger")).first.evaluate(  # type: ignore[attr-defined]
        "(o) => o.querySelector('.dexviz-debugger').getBoundingClientRect().right"
        " - o.getBoundingClientRect().right")
    return min(sizes), bool(scrolls), float(overflow)


# The rendered size of every SVG text of a graph: its font size in user units times the
# screen scale of its coordinate system (what the viewBox and CSS made of it).
_TEXT_SIZES = """(graph) => Array.from(graph.querySelectorAll('svg text'))
    .filter((t) => t.textContent.trim() && t.getBBox().width > 0)
    .map((t) => { const m = t.getScreenCTM();
                  return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); })"""
# Fit draws the whole graph; below 9 px text it shows a note naming the readable zooms.
_SMALL_NOTE = """(graph) => { const n = graph.querySelector('.dx-small-text');
    return n !== null && getComputedStyle(n).display !== 'none'; }"""


def test_definition_tab_from_notebooks_and_readable_text(lab: Lab, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        try:
            _open_and_run(page, lab, f"notebooks/{DEFINITION_NOTEBOOK.name}")
            debuggers = page.locator(".dexviz-debugger.widget-vbox")
            page.wait_for_function("() => document.querySelectorAll("
                                   "'.dexviz-debugger .dx-graph svg').length >= 2",
                                   timeout=RUN_TIMEOUT_MS)
            first, big = debuggers.nth(0), debuggers.nth(1)
            first.locator("button", has_text="Definition").click()
            first.locator(".dx-graph svg g.node[id='step:EnterContractEdit']").wait_for(
                timeout=60_000)
            definition_sizes = first.locator(".dx-graph").evaluate(_TEXT_SIZES)
            definition_note = first.locator(".dx-graph").evaluate(_SMALL_NOTE)
            # Focus on the Flow start: only the start Step stays undimmed in the definition.
            first.locator("button", has_text="Focus").click()
            first.locator(".dx-graph svg g.node.dx-unfocused").first.wait_for(timeout=60_000)
            undimmed = first.locator(".dx-graph svg g.node[id^='step:']:not(.dx-unfocused)"
                                     ).evaluate_all("(gs) => gs.map((g) => g.id)")
            lineage_sizes = big.locator(".dx-graph").evaluate(_TEXT_SIZES)
            lineage_note = big.locator(".dx-graph").evaluate(_SMALL_NOTE)
            output = page.locator(".jp-OutputArea-output").filter(
                has=page.locator("img, svg")).last
            picture = output.locator("img, svg").first
            picture_width = picture.evaluate("(e) => e.getBoundingClientRect().width")
            output_width = output.evaluate("(e) => e.getBoundingClientRect().width")
            cwd = page.locator(".jp-OutputArea-output", has_text="working folder").inner_text()
            _shot(page, tmp_path, "debugger-definition.png")
        except Exception:
            _shot(page, tmp_path, "debugger-definition-failure.png")
            raise
        finally:
            browser.close()
    assert "working folder: notebooks" in cwd
    assert undimmed == ["step:StartContractEdits"], undimmed
    assert definition_sizes
    assert (min(definition_sizes) >= MIN_TEXT_PX) != definition_note, min(definition_sizes)
    assert len(lineage_sizes) > 20  # grouped by default: a node per Step type and fan-out
    assert (min(lineage_sizes) >= MIN_TEXT_PX) != lineage_note, (
        f"smallest lineage text {min(lineage_sizes):.1f} px, note shown: {lineage_note}")
    assert 0 < picture_width <= output_width + 1
