"""Test support for the debugger: contract-edit histories, engines and SVG class lookups."""

from __future__ import annotations

import html
import re
from pathlib import Path

import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import EventKind, History
from tests.analysis.runs import contract_edit_run
from tests.compare.variants import CHANGES, load_variant, record

TOKEN = "contractEditToken"
FINISHED = "contractEditFinished"

_GROUP = re.compile(r'<g id="([^"]*)" class="([^"]*)"')


def history(reviewers: int = 8, seed: int = 0) -> History:
    """A finished ContractEditFlow run (cached)."""
    return contract_edit_run(seed, reviewers)


def runs_differing_in_one_decision(directory: Path) -> tuple[History, History]:
    """The seed Flow's run, and a variant's whose EditContract decides ``dead_end()`` once.

    Both recorded with 8 reviewers and seed 0; the variants' modules are written into
    ``directory``.
    """
    recorded = record(load_variant(directory, ()), 8, seed=0).history
    changed = record(load_variant(directory, CHANGES["changed decision"]), 8, seed=0).history
    return recorded, changed


def token_consumption(events: History) -> int:
    """The index of the first event where a reviewer's EnterContractEdit consumed the token."""
    return next(i for i, e in enumerate(events)
                if e.kind == EventKind.MESSAGE_CONSUMED and e.payload.get("channel") == TOKEN
                and e.step_type == "EnterContractEdit")


def started_engine(reviewers: int = 3, seed: int = 0) -> dexviz.Engine:
    """A simulation Engine in which ContractEditFlow ``flow-1`` was started, nothing run yet."""
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=seed)
    engine.client().start_flow(flow, "flow-1", sample_edits(reviewers))
    return engine


def svg_classes(svg: str) -> dict[str, set[str]]:
    """``{group id: classes}`` of every ``<g id=... class=...>`` in an SVG (ids unescaped)."""
    return {html.unescape(m.group(1)): set(m.group(2).split()) for m in _GROUP.finditer(svg)}


def marked(svg: str, css_class: str) -> set[str]:
    """The ids of the groups carrying ``css_class``."""
    return {group for group, classes in svg_classes(svg).items() if css_class in classes}
