"""The committed tutorial notebooks are well formed, small, offline and checked by nbval (issue 7).

These checks read the ``.ipynb`` JSON only; they start no kernel. Running the notebooks is nbval's
job (``make test``: ``pytest --nbval-lax --nbval-sanitize-with notebooks/nbval-sanitize.cfg``),
and ``scripts/run_notebooks.py`` re-executes and saves them. What is checked here is what nbval
cannot see: that enough cells are compared at all, and that the saved outputs stay small, free of
machine-specific text, and renderable without the network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
SANITIZE_FILE = NOTEBOOK_DIR / "nbval-sanitize.cfg"
EXPECTED = (
    "01-quickstart",
    "02-critical-section",
    "03-close-semantics",
    "04-failures-and-retries",
    "05-debugging",
    "06-live-client",
    "07-exploring-interleavings",
    "08-dex-server-runs",
    "09-compare-runs-and-check-a-change",
)
CHECK_MARKER = "NBVAL_CHECK_OUTPUT"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MIN_CHECKED_CELLS = 2
MAX_OUTPUT_BYTES = 50 * 1024
MAX_NOTEBOOK_BYTES = 300 * 1024
# A displayed Debugger's static snapshot (graph, panels, timeline as HTML) is what a notebook
# shows without a kernel; it has its own limit and is not counted in the notebook's.
SNAPSHOT_MARK = 'class="dexviz-debugger dx-static"'
MAX_SNAPSHOT_BYTES = 200 * 1024
# Base64 images are binary noise to the text patterns below; they are only measured.
BINARY_TYPES = frozenset({"image/png", "image/jpeg", "image/gif"})
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.:/-])/(?:home|root|tmp|work|Users|usr|opt|var|private|mnt|srv|etc)/"
    r"|\b[A-Za-z]:\\\\?(?:Users|Windows)"
    r"|file://"
)
MEMORY_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
REMOTE_ASSET = re.compile(
    r"<script[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//|<link[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//"
    r"|cdn\.jsdelivr|unpkg\.com|cdnjs\.|require\.js|@import\s+url\(\s*[\"']?https?:",
    re.IGNORECASE,
)

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def load(path: Path) -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return notebook


def text(value: Any) -> str:
    """nbformat stores multi-line strings either whole or as a list of lines."""
    return "".join(value) if isinstance(value, list) else str(value)


def code_cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def is_checked(cell: dict[str, Any]) -> bool:
    """The way nbval reads markers: any comment line equal to the marker."""
    lines = text(cell["source"]).splitlines()
    return any(
        line.strip().lstrip("#").strip() == CHECK_MARKER
        for line in lines
        if line.strip().startswith("#")
    )


def output_texts(output: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(label, text) for every textual part of one output."""
    if output["output_type"] == "stream":
        yield f"stream {output['name']}", text(output["text"])
    for mime, value in output.get("data", {}).items():
        if mime not in BINARY_TYPES:
            yield mime, value if isinstance(value, str) else json.dumps(value)


def all_outputs(notebook: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, cell in enumerate(notebook["cells"], start=1):
        for output in cell.get("outputs", []):
            yield number, output


def by_name(paths: list[Path]) -> list[Any]:
    return [pytest.param(path, id=path.stem) for path in paths]


def test_the_six_tutorials_are_committed() -> None:
    assert [path.stem for path in NOTEBOOKS] == list(EXPECTED)


def test_the_sanitize_file_pairs_every_regex_with_a_replacement() -> None:
    # nbval reads only "regex: ..." lines immediately followed by "replace: ..." lines.
    content = SANITIZE_FILE.read_text(encoding="utf-8")
    pairs = re.findall(r"^regex: (.*)$\n^replace: (.*)$", content, flags=re.MULTILINE)
    assert pairs, f"{SANITIZE_FILE.name} has no regex/replace pair"
    assert len(pairs) == content.count("\nregex: ")
    for pattern, _ in pairs:
        re.compile(pattern)


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_runs_on_the_python3_kernel(path: Path) -> None:
    notebook = load(path)
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    assert notebook["metadata"]["kernelspec"]["language"] == "python"


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_has_enough_output_checked_cells(path: Path) -> None:
    checked = [cell for cell in code_cells(load(path)) if is_checked(cell)]
    assert len(checked) >= MIN_CHECKED_CELLS, f"{path.name}: {len(checked)} checked cell(s)"
    empty = [text(cell["source"]).splitlines()[1:2] for cell in checked if not cell["outputs"]]
    assert not empty, f"{path.name}: checked cells with no stored output compare nothing: {empty}"


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_is_committed_executed_without_errors(path: Path) -> None:
    notebook = load(path)
    unexecuted = [
        number
        for number, cell in enumerate(notebook["cells"], start=1)
        if cell["cell_type"] == "code"
        and text(cell["source"]).strip()
        and cell.get("execution_count") is None
    ]
    assert not unexecuted, f"{path.name}: cells never executed: {unexecuted}"
    counts = [
        cell["execution_count"]
        for cell in code_cells(notebook)
        if cell.get("execution_count") is not None
    ]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not run top to bottom"
    errors = [
        (number, output.get("ename"))
        for number, output in all_outputs(notebook)
        if output["output_type"] == "error"
    ]
    assert not errors, f"{path.name}: error outputs {errors}"


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_outputs_are_small(path: Path) -> None:
    snapshots = 0
    for number, output in all_outputs(load(path)):
        size = len(json.dumps(output).encode("utf-8"))
        is_snapshot = SNAPSHOT_MARK in text(output.get("data", {}).get("text/html", ""))
        snapshots += size if is_snapshot else 0
        limit = MAX_SNAPSHOT_BYTES if is_snapshot else MAX_OUTPUT_BYTES
        assert size <= limit, f"{path.name} cell {number}: an output of {size} bytes"
    size = path.stat().st_size - snapshots
    assert size <= MAX_NOTEBOOK_BYTES, f"{path.name}: {size} bytes besides Debugger snapshots"
    assert "widgets" not in load(path)["metadata"], f"{path.name}: saved widget state"


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_saves_no_widget_views_without_their_state(path: Path) -> None:
    # Without saved widget state a stored view renders as "model not found"; keep text/plain.
    views = [
        number
        for number, output in all_outputs(load(path))
        if WIDGET_VIEW in output.get("data", {})
    ]
    assert not views, f"{path.name}: widget views stored in cells {views}"


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_outputs_have_no_paths_or_addresses(path: Path) -> None:
    for number, output in all_outputs(load(path)):
        for label, value in output_texts(output):
            for pattern in (ABSOLUTE_PATH, MEMORY_ADDRESS):
                found = pattern.search(value)
                assert found is None, (
                    f"{path.name} cell {number} ({label}): {found.group(0)!r} in "
                    f"{value[max(found.start() - 40, 0) : found.end() + 40]!r}"
                )


@pytest.mark.parametrize("path", by_name(NOTEBOOKS))
def test_notebook_renders_offline(path: Path) -> None:
    for number, output in all_outputs(load(path)):
        for label, value in output_texts(output):
            found = REMOTE_ASSET.search(value)
            assert found is None, f"{path.name} cell {number} ({label}) loads {found.group(0)!r}"


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("saved to /work/main/demo-output/history.jsonl", ABSOLUTE_PATH),
        ("File /home/someone/dexviz/cli.py, line 3", ABSOLUTE_PATH),
        ("C:\\Users\\someone\\flow.py", ABSOLUTE_PATH),
        ("<Step object at 0x7f3a2c1b9d90>", MEMORY_ADDRESS),
        ('<script src="https://cdn.jsdelivr.net/npm/x.js"></script>', REMOTE_ASSET),
    ],
)
def test_the_output_checks_catch_what_they_look_for(value: str, pattern: re.Pattern[str]) -> None:
    assert pattern.search(value)


@pytest.mark.parametrize(
    "value",
    [
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">',
        "Flow 'flow-1' (run ca4094a2-14f9-4e09-bc96-d922175bf3e2): 8 holdings",
        "SubFlow:doc-1-Publish-1-0 COMPLETED ('contract.pdf',)",
        "  EnterContractEdit-7             0.000    4.000  published  SaveContractEdit-1",
    ],
)
def test_the_output_checks_accept_ordinary_output(value: str) -> None:
    assert not ABSOLUTE_PATH.search(value)
    assert not MEMORY_ADDRESS.search(value)
    assert not REMOTE_ASSET.search(value)
