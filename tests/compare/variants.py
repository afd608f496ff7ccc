"""Shared helpers for the run diff and replay tests: edited copies of ContractEditFlow, id shifts.

``load_variant`` writes the seed's ContractEditFlow source with some text replaced and imports
it under one fixed module name, so a run recorded with the original and replayed with an edit
sees the same error type names, as a deployed module keeps its name across a change.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import dexviz
from dexviz.examples import contract_edit
from dexviz.history import History

MODULE = "contract_edit_under_check"
ORIGINAL = Path(contract_edit.__file__).read_text(encoding="utf-8")

SAVE_PUBLISHES = (
    '        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "saved"))\n'
    '        CONTRACT_EDIT_TOKEN.publish(context, "contract")\n'
)
SAVE_BODY_START = (
    "        await asyncio.sleep(CONTRACT_EDIT_SECONDS)\n        if edit.should_fail_edit:"
)

CHANGES: dict[str, tuple[tuple[str, str], ...]] = {
    "renamed Step": (("SaveContractEdit", "SaveEdit"),),
    "new branch for new inputs": ((
        SAVE_BODY_START,
        '        if edit.reviewer == "auditor":\n            return dead_end()\n' + SAVE_BODY_START,
    ),),
    "changed decision": ((
        "if started_edit.should_withdraw:",
        'if started_edit.should_withdraw or started_edit.reviewer == "reviewer-3":',
    ),),
    "reordered publication": ((
        SAVE_PUBLISHES,
        '        CONTRACT_EDIT_TOKEN.publish(context, "contract")\n'
        '        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "saved"))\n',
    ),),
    "changed log line and comment": ((
        SAVE_BODY_START,
        "        # The edit is saved only after the reviewer's two seconds of work.\n"
        '        logging.getLogger(__name__).info("saving the edit of %s", edit.reviewer)\n'
        + SAVE_BODY_START,
    ), ("import asyncio\n", "import asyncio\nimport logging\n")),
}
"""Each change class of a replay check, as text edits of the seed's Flow source."""

EXPECTED_VERDICTS = {
    "renamed Step": False,
    "new branch for new inputs": True,
    "changed decision": False,
    "reordered publication": False,
    "changed log line and comment": True,
}
"""Whether each change class replays compatibly."""


def variant_source(changes: tuple[tuple[str, str], ...] = ()) -> str:
    """The seed Flow's source with each ``(old, new)`` text replaced (each must occur)."""
    text = ORIGINAL
    for old, new in changes:
        assert old in text, f"the seed source no longer contains {old!r}"
        text = text.replace(old, new)
    return text


def load_variant(directory: Path, changes: tuple[tuple[str, str], ...] = ()) -> ModuleType:
    """Import an edited copy of the seed Flow's module as ``MODULE`` (replacing the last one)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"variant_{len(list(directory.glob('variant_*.py')))}.py"
    path.write_text(variant_source(changes), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(MODULE, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    spec.loader.exec_module(module)
    return module


def record(module: ModuleType, reviewers: int = 8, seed: int = 0, **kwargs: Any) -> Any:
    """Simulate the module's ContractEditFlow over ``reviewers`` sample edits."""
    return dexviz.simulate(module.ContractEditFlow(), module.sample_edits(reviewers),
                           seed=seed, **kwargs)


def shift_execution_numbers(history: History, offset: int = 10) -> History:
    """The same history with every execution number ``Type-N`` renumbered ``Type-(N+offset)``."""
    pattern = re.compile(r'"([A-Z][A-Za-z]*)-(\d+)"')
    text = pattern.sub(lambda m: f'"{m.group(1)}-{int(m.group(2)) + offset}"',
                       history.to_jsonl())
    lines = text.splitlines()
    header = json.loads(lines[0])
    header.pop("sha256", None)
    return History.from_jsonl([json.dumps(header), *lines[1:]])
