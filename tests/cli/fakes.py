"""What the CLI tests feed ``dexviz demo``'s reporting instead of a real run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from dexviz import cli


@dataclass(frozen=True)
class Record:
    """One reviewer's outcome and interval, shaped like the demo's records."""

    reviewer: str
    outcome: str
    started_at_millis: int
    finished_at_millis: int


def fake_demo(records: Sequence[Any], status: str = "COMPLETED") -> cli.DemoRun:
    """A DemoRun of ``records`` whose history saves as one line."""
    history = SimpleNamespace(to_jsonl=lambda: '{"seq": 1}\n')
    return cli.DemoRun(run=SimpleNamespace(history=history), status=status, records=tuple(records))
