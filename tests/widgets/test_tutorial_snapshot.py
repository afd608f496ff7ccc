"""The docs show tutorial 05's saved Debugger snapshot: it must show a telling event.

Displayed at event 1 nearly everything is faded ("not created yet"); the tutorial displays it
where a reviewer has just taken the token, with executions active and the holder marked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05-debugging.ipynb"


def _snapshots() -> list[str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    found = []
    for cell in cells:
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", ""))
            if "dexviz-debugger dx-static" in html:
                found.append(html)
    return found


def test_the_first_saved_debugger_snapshot_shows_a_telling_event():
    snapshots = _snapshots()
    assert snapshots, "the saved tutorial keeps no Debugger snapshot"
    first = snapshots[0]
    position = re.search(r'dx-pos">event (\d+) / (\d+)', first)
    assert position is not None
    assert int(position.group(1)) > 1
    assert re.search(r'class="[^"]*\bdx-holder\b', first), "no token holder is marked"
    assert "Active executions (0)" not in first
