"""The textual rewrites of ``engine_layout.py``: imports, dotted names, paths, the diagram.

Each function takes the text of one file and ``placed`` (module name -> the sub-package it is
in after the move) and returns the new text; none reads or writes a file. What a rewrite could
get wrong (a relative import, a path found from a module's own file) is refused with a
:class:`LayoutError` naming the file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path


class LayoutError(Exception):
    """Something the script will not guess about; the message names the file and line."""


# ---------------------------------------------------------------------------- safety checks


def check_python(relative: str, text: str, placed: dict[str, str]) -> None:
    """Refuse what a textual rewrite would get wrong in one Python file."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise LayoutError(f"{relative}:{error.lineno}: cannot parse: {error.msg}") from error
    in_engine = relative.startswith("dexviz/engine/")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and in_engine:
            raise LayoutError(
                f"{relative}:{node.lineno}: relative import; make it absolute "
                f"(from dexviz.engine.... import ...) and run this again"
            )
    if in_engine and Path(relative).stem in placed and "__file__" in text:
        line = text[: text.index("__file__")].count("\n") + 1
        if re.search(r"__file__\)(\.resolve\(\))?\.(parent\b|parents\[)", text):
            raise LayoutError(
                f"{relative}:{line}: finds paths relative to its own file, which moves one "
                f"level down; find them by name instead"
            )


# ---------------------------------------------------------------------------- rewriting


def _import_from_rewrite(lines: list[str], node: ast.ImportFrom, placed: dict[str, str]) -> str:
    """The statements that replace ``from dexviz.engine import ...`` naming moved modules."""
    relative_first = lines[node.lineno - 1]
    assert node.end_lineno is not None and node.end_col_offset is not None
    last = lines[node.end_lineno - 1]
    before, after = relative_first[: node.col_offset], last[node.end_col_offset :]
    inner = lines[node.lineno : node.end_lineno - 1]
    if before.strip() or (after.strip() and not after.strip().startswith("#")) or any(
        "#" in line for line in inner
    ):
        raise LayoutError(f"line {node.lineno}: an import this script cannot split; split it")
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        module = f"dexviz.engine.{placed[alias.name]}" if alias.name in placed else "dexviz.engine"
        name = alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
        groups.setdefault(module, []).append(name)
    statements = [f"{before}from {module} import {', '.join(names)}" for module, names in
                  groups.items()]  # fmt: skip
    return "\n".join(statements) + after.rstrip("\n") + "\n"


def rewrite_python_imports(relative: str, text: str, placed: dict[str, str]) -> str:
    """``from dexviz.engine import m`` statements, split by the package each module moved to."""
    if "dexviz.engine import" not in text:
        return text
    lines = text.splitlines(keepends=True)
    nodes = [
        node for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "dexviz.engine"
        and any(alias.name in placed for alias in node.names)
    ]  # fmt: skip
    for node in sorted(nodes, key=lambda n: n.lineno, reverse=True):
        try:
            replacement = _import_from_rewrite(lines, node, placed)
        except LayoutError as error:
            raise LayoutError(f"{relative}:{error}") from None
        assert node.end_lineno is not None
        lines[node.lineno - 1 : node.end_lineno] = [replacement]
    return "".join(lines)


def text_import_rewrite(relative: str, text: str, placed: dict[str, str]) -> str:
    """``from dexviz.engine import m`` on one line of a notebook or a Markdown page."""

    def replace(match: re.Match[str]) -> str:
        names = [name.strip() for name in match.group(2).split(",")]
        packages = {placed.get(name.split(" as ")[0].strip()) for name in names}
        if packages == {None}:
            return match.group(0)
        if len(packages) > 1:
            line = text[: match.start()].count("\n") + 1
            raise LayoutError(f"{relative}:{line}: imports from several layers; split it")
        return f"{match.group(1)}dexviz.engine.{packages.pop()} import{match.group(2)}"

    return re.sub(r"(from )dexviz\.engine import((?: *[\w]+(?: as \w+)?,?)+)", replace, text)


def rewrite_text(text: str, placed: dict[str, str], prose_names: bool = True) -> str:
    """Every dotted name, path and path part of a moved module, in any text.

    ``prose_names``: also ```engine.<m>``` in backquotes (not in notebooks and user docs, where
    ``engine`` is an Engine).
    """
    if not placed or "engine" not in text:
        return text
    names = "|".join(sorted(placed, key=lambda m: (-len(m), m)))

    def dotted(match: re.Match[str]) -> str:
        return f"{match.group(1)}{placed[match.group(2)]}.{match.group(2)}"

    def path(match: re.Match[str]) -> str:
        return f"{match.group(1)}{placed[match.group(2)]}/{match.group(2)}"

    def parts(match: re.Match[str]) -> str:
        quote, module = match.group(3), match.group(4)
        return f"{match.group(1)}{quote}{placed[module]}{quote} / {quote}{module}.py{quote}"

    text = re.sub(rf"(?<![\w.])(dexviz\.engine\.)({names})\b", dotted, text)
    if prose_names:  # `engine.errors` in a notebook is an Engine's attribute, not the module
        text = re.sub(rf"(?<=`)(engine\.)({names})\b", dotted, text)
    text = re.sub(rf"(?<![\w./-])((?:dexviz/)?engine/)({names})(?=\.py\b)", path, text)
    text = re.sub(rf"(?<![\w./-])(dexviz/engine/)({names})\b(?![.\w/-])", path, text)
    return re.sub(rf"""((["'])engine\2\s*/\s*)(["'])({names})\.py\3""", parts, text)


def rewrite_architecture(text: str, packages: tuple[str, ...]) -> str:
    """The engine's layer diagram: a layer that is a sub-package is drawn as ``name/``."""
    layer = re.compile(rf"(─ )({'|'.join(packages)})( +)(?=\S)")
    return layer.sub(lambda m: f"{m.group(1)}{m.group(2)}/{m.group(3)[1:]}", text)
