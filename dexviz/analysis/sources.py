"""Finding a Flow's source file from what a history recorded, without importing anything.

A history records ``source_file`` relative to the import root (``dexviz/examples/x.py``) so it
stays byte-identical across checkouts, plus the Flow's ``module``. A history may come from
anywhere, so the recorded path is opened only where the user put it or where Python would
import the Flow from: the module's import location (found with ``importlib`` specs, without
importing the module or its packages), the history file's folder, or the working folder.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SourceLookup", "find_recorded_source", "module_file", "recorded_source"]


@dataclass(frozen=True)
class SourceLookup:
    """Where a recorded source file was looked for, and where (if anywhere) it was found.

    Attributes:
        recorded: The ``source_file`` the history records (None when it records none).
        found: The existing file to read, or None.
        tried: Every path looked at, in order (for the message when nothing was found).
        refused: Existing files that were not opened because they lie outside the allowed
            folders (an absolute or ``..`` path from an unknown history).
    """

    recorded: str | None
    found: Path | None
    tried: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()

    def explain(self) -> str:
        """Why no source was found: what was recorded, the paths tried, and what to do."""
        if self.recorded is None:
            head = "the history records no source file for the Flow"
        else:
            head = f"the recorded source file {self.recorded!r} was not found"
        parts = [head]
        if self.tried:
            parts.append("tried: " + ", ".join(self.tried))
        if self.refused:
            parts.append("not opened (outside the history's folder and the working folder): "
                         + ", ".join(self.refused))
        parts.append("pass flow_source= (a .py path, a module or the Flow class) to show it")
        return "; ".join(parts)


def find_recorded_source(
    spec: Mapping[str, Any], *, history_dir: str | Path | None = None,
    cwd: str | Path | None = None,
) -> SourceLookup:
    """Look for the Flow's source file named in a history's spec.

    The order: the recording module's import location (when its file ends with the recorded
    path, or the recorded path is absolute and is that file), then the recorded path under
    ``history_dir`` and under the working folder. A candidate outside those folders (through
    ``..`` or an absolute path) is refused unless it is the module's import location: a
    history cannot make the Debugger read an arbitrary file.
    """
    recorded = spec.get("source_file")
    if not isinstance(recorded, str) or not recorded:
        return SourceLookup(None, None)
    path = Path(recorded)
    tried: list[str] = []
    imported = module_file(spec.get("module"))
    if imported is not None:
        tried.append(str(imported))
        if _same_file(imported, path):
            return SourceLookup(recorded, imported, tuple(tried))
    roots = [Path(r).resolve() for r in (history_dir, cwd or Path.cwd()) if r is not None]
    refused: list[str] = []
    for root in roots:
        candidate = (root / path).resolve()
        if str(candidate) in tried:
            continue
        tried.append(str(candidate))
        if not candidate.is_file():
            continue
        if any(candidate.is_relative_to(allowed) for allowed in roots):
            return SourceLookup(recorded, candidate, tuple(tried))
        refused.append(str(candidate))
    return SourceLookup(recorded, None, tuple(tried), tuple(refused))


def recorded_source(
    spec: Mapping[str, Any], *, history_dir: str | Path | None = None
) -> Path | None:
    """The Flow's source file named in a history's spec, if found (see find_recorded_source)."""
    return find_recorded_source(spec, history_dir=history_dir).found


def module_file(module: object) -> Path | None:
    """The ``.py`` file Python would import ``module`` from, found without importing anything.

    An already-imported module gives its ``__file__``; otherwise the top-level package's
    folders are those of its imported package, or are found with ``importlib.util.find_spec``
    on the top-level name (which imports nothing, and sees an editable install's finder),
    and the rest of the dotted name is followed through them. ``__main__`` has no import location.
    """
    if not isinstance(module, str) or not module or module == "__main__":
        return None
    loaded = sys.modules.get(module)
    if loaded is not None:
        found = getattr(loaded, "__file__", None)
        return Path(found).resolve() if isinstance(found, str) and found.endswith(".py") else None
    head, *rest = module.split(".")
    folders = _package_folders(head)
    if folders is None:
        spec = _top_level_spec(head)
        if spec is None:
            return None
        if not rest:
            return _py_file(spec.origin)
        folders = list(spec.submodule_search_locations or ())
    if not rest:
        return _first_file(Path(folder) / "__init__.py" for folder in folders)
    for folder in folders:
        base = Path(folder).joinpath(*rest)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _package_folders(head: str) -> list[str] | None:
    """The folders of the already-imported top-level package ``head`` (None if not imported)."""
    loaded = sys.modules.get(head)
    path = getattr(loaded, "__path__", None) if loaded is not None else None
    return list(path) if path is not None else None


def _top_level_spec(head: str) -> importlib.machinery.ModuleSpec | None:
    """``head``'s spec from every finder on ``sys.meta_path`` (an editable install's too).

    For a top-level name ``importlib.util.find_spec`` imports nothing; a finder that fails on
    an odd name counts as not finding it.
    """
    try:
        return importlib.util.find_spec(head)
    except (ImportError, ValueError):
        return None


def _first_file(candidates: Iterable[Path]) -> Path | None:
    return next((c.resolve() for c in candidates if c.is_file()), None)


def _py_file(origin: str | None) -> Path | None:
    if origin is None or not origin.endswith(".py"):
        return None
    return Path(origin).resolve()


def _same_file(imported: Path, recorded: Path) -> bool:
    if recorded.is_absolute():
        return imported == recorded.resolve()
    parts = recorded.parts
    return len(parts) <= len(imported.parts) and imported.parts[-len(parts):] == parts
