"""The replay's data island: every frame as compact JSON, repeated text stored once.

Consecutive events share most of their panels (the Attributes table rarely changes, a Channel
table only at publications), so each distinct HTML fragment and class string is stored once
and frames refer to them by number. The JSON is safe inside ``<script type="application/json">``
(no ``</`` or ``<!--`` appears in it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz.replay.frame import Frame

__all__ = ["GraphIds", "Strings", "encode_frames", "script_json"]


@dataclass
class Strings:
    """An append-only table of distinct strings, each numbered by first appearance."""

    items: list[str] = field(default_factory=list)
    _numbers: dict[str, int] = field(default_factory=dict)

    def number(self, text: str) -> int:
        """The number of ``text``, adding it on first sight."""
        found = self._numbers.get(text)
        if found is None:
            found = self._numbers[text] = len(self.items)
            self.items.append(text)
        return found


@dataclass(frozen=True)
class GraphIds:
    """One drawn graph's SVG group ids and their own classes, in document order.

    Attributes:
        key: The graph's key in the page (``l0``, ``l1`` ... per run, ``d`` for the definition).
        ids: SVG group ids the highlighting may touch.
        base: Each group's classes as Graphviz wrote them.
    """

    key: str
    ids: tuple[str, ...]
    base: tuple[str, ...]

    def position(self) -> dict[str, int]:
        """Group id -> its position in ``ids``."""
        return {group_id: number for number, group_id in enumerate(self.ids)}


def _marks(extra: Mapping[str, str], positions: Mapping[str, int] | None,
           classes: Strings) -> list[int]:
    """``[position, class number, ...]`` for the groups of a drawn graph, in id order."""
    if positions is None:
        return []
    pairs = sorted((positions[group_id], classes.number(value))
                   for group_id, value in extra.items() if value and group_id in positions)
    return [number for pair in pairs for number in pair]


def encode_frames(frames: Iterable[Frame], runs: Sequence[str],
                  graphs: Mapping[str, GraphIds],
                  compare: Sequence[str] | None = None) -> dict[str, Any]:
    """The data the page's script replays: frames, their fragments, kinds and graph ids.

    Args:
        frames: Every event's frame, in history order.
        runs: The history's run ids (a frame's ``r`` is a position here).
        graphs: The drawn graphs by key (``l<run position>``, ``d``); absent ones are not drawn.
        compare: In compare mode, each event's compare block (a frame's ``c``).
    """
    fragments, classes, kinds = Strings(), Strings(), Strings()
    positions = {key: graph.position() for key, graph in graphs.items()}
    encoded = []
    for number, frame in enumerate(frames):
        run = runs.index(frame.run_id)
        encoded.append({
            "h": fragments.number(frame.heading),
            "p": [fragments.number(panel) for panel in frame.panels],
            "r": run,
            "k": kinds.number(frame.kind),
            "t": fragments.number(frame.cursor),
            "l": _marks(frame.lineage, positions.get(f"l{run}"), classes),
            "d": _marks(frame.definition, positions.get("d"), classes),
        })
        if compare is not None:
            encoded[-1]["c"] = fragments.number(compare[number])
    return {
        "frags": fragments.items,
        "classes": classes.items,
        "kinds": kinds.items,
        "graphs": {key: {"ids": list(g.ids), "base": list(g.base)} for key, g in graphs.items()},
        "events": encoded,
    }


def script_json(data: Mapping[str, Any]) -> str:
    """``data`` as compact JSON that cannot end the ``<script>`` element holding it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")
