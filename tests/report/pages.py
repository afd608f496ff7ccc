"""Test support for the HTML replay: read its data island back into per-event frames."""

from __future__ import annotations

import json
import re
from typing import Any

from dexviz.history import History

_ISLAND = re.compile(r'<script type="application/json" id="dx-data">(.*?)</script>', re.S)


def island(page: str) -> dict[str, Any]:
    """The JSON data island of a replay page."""
    found = _ISLAND.search(page)
    assert found, "the page has no data island"
    return json.loads(found.group(1))


def marks(data: dict[str, Any], key: str, pairs: list[int]) -> dict[str, str]:
    """A frame's ``[position, class number, ...]`` marks as ``{svg id: classes}``."""
    ids = data["graphs"][key]["ids"]
    return {ids[pairs[i]]: data["classes"][pairs[i + 1]] for i in range(0, len(pairs), 2)}


def frame(data: dict[str, Any], index: int) -> dict[str, Any]:
    """What the page's script shows at event ``index``, decoded like the script does."""
    event = data["events"][index]
    frags = data["frags"]
    return {
        "heading": frags[event["h"]],
        "panels": [frags[number] for number in event["p"]],
        "run": event["r"],
        "kind": data["kinds"][event["k"]],
        "cursor": frags[event["t"]],
        "lineage": marks(data, f"l{event['r']}", event["l"]) if event["l"] else {},
        "definition": marks(data, "d", event["d"]) if event["d"] else {},
    }


def edited(events: History, kind: str, **payload: object) -> History:
    """``events`` with ``payload`` merged into every event of ``kind`` (through JSON lines)."""
    lines = []
    for line in events.to_jsonl().splitlines():
        record = json.loads(line)
        if "format" in record:  # the header's count and digest describe the unedited lines
            record.pop("sha256", None)
            record.pop("events", None)
        if record.get("kind") == kind:
            record["payload"] = {**record["payload"], **payload}
        lines.append(json.dumps(record))
    return History.from_jsonl("\n".join(lines) + "\n")
