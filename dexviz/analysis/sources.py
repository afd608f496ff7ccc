"""Finding a Flow's source file from what a history recorded, without importing anything."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def recorded_source(spec: Mapping[str, Any]) -> Path | None:
    """The Flow's source file named in a history's spec, if it exists on this machine.

    The engine records the path relative to the import root (``dexviz/examples/x.py``) so
    histories stay byte-identical across checkouts; it is looked up from the working folder,
    then along ``sys.path``. Older histories with an absolute path still work.
    """
    recorded = spec.get("source_file")
    if not isinstance(recorded, str) or not recorded:
        return None
    path = Path(recorded)
    if path.is_absolute():
        return path if path.is_file() else None
    for root in ("", *sys.path):
        candidate = Path(root or ".") / path
        if candidate.is_file():
            return candidate.resolve()
    return None
