"""Regenerate ARCHITECTURE.md's module list from each module's first docstring line.

Run: ``.venv/bin/python scripts/architecture.py`` (``--check`` exits 1 if the file is stale).
The layer rules and the prose at the top of ARCHITECTURE.md are kept; only the list between
the markers is rewritten.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- modules:start -->"
END = "<!-- modules:end -->"


def first_line(path: Path) -> str:
    """The first line of the module's docstring, or a marker that it has none."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return doc.strip().splitlines()[0] if doc else "(no module docstring)"


def module_list() -> str:
    """One Markdown bullet per module of the dexviz package, grouped by folder."""
    lines: list[str] = []
    current = None
    # By folder, then name: a sub-package's modules come after all of its parent's.
    for path in sorted((ROOT / "dexviz").rglob("*.py"), key=lambda p: (p.parent.parts, p.name)):
        folder = path.parent.relative_to(ROOT).as_posix()
        if folder != current:
            lines.append(f"\n### `{folder}/`\n")
            current = folder
        lines.append(f"- `{path.name}` — {first_line(path)}")
    return "\n".join(lines).strip() + "\n"


def main() -> int:
    """Rewrite (or with --check, verify) the module list in ARCHITECTURE.md."""
    target = ROOT / "ARCHITECTURE.md"
    text = target.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{START}\n{module_list()}{END}{tail}"
    if "--check" in sys.argv:
        return 0 if updated == text else 1
    target.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
