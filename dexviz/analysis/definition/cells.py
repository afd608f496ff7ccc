"""Flows typed into notebook cells: gather their source text from ``linecache``, never running it.

IPython (and Jupyter's kernel) registers every executed cell in :mod:`linecache` under a
made-up file name (``/tmp/ipykernel_1234/3712.py`` or ``<ipython-input-3-…>``), in the order
the cells ran. A class defined in a cell has no source file ``inspect`` can read, but its
methods' code objects name their cell. From those cells the names they use are followed to the
latest cell defining each (a Step class, a Channel, a helper), transitively, and the cells found
are joined in execution order into one module text that the static analysis reads like a file.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType

from dexviz.analysis.definition.loader import SourceFile, parse_source

__all__ = ["CellSource", "cell_source", "load_cell_source", "notebook_cells"]


@dataclass(frozen=True)
class Cell:
    """One executed cell as linecache holds it: its made-up file name, text and parse tree."""

    filename: str
    text: str
    tree: ast.Module

    @cached_property
    def defines(self) -> frozenset[str]:
        """Top-level names this cell binds (classes, functions, assignments, imports).

        A star import binds ``"*"``: such a cell may define any name.
        """
        return frozenset(name for stmt in self.tree.body for name in _bound(stmt))

    @cached_property
    def uses(self) -> frozenset[str]:
        """Every name this cell reads anywhere (including inside functions and classes)."""
        return frozenset(
            node.id for node in ast.walk(self.tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        )


@dataclass(frozen=True)
class CellSource:
    """The cells a cell-defined class needs, joined into one module text.

    Attributes:
        path: A readable stand-in for the file name (``<cells of MyFlow>``).
        text: The cells' text in execution order, one blank line between cells.
        cells: The linecache file names of the cells used, in execution order.
    """

    path: str
    text: str
    cells: tuple[str, ...]


def notebook_cells() -> list[Cell]:
    """The cells linecache holds, in execution order; cells that do not parse are skipped.

    IPython's entries are the ones without a modification time (real files have one), so
    ``linecache.checkcache`` never drops them.
    """
    found = []
    for filename, entry in list(linecache.cache.items()):
        if len(entry) != 4 or entry[1] is not None:
            continue
        text = "".join(entry[2])
        try:
            tree = ast.parse(text, filename=filename)
        except (SyntaxError, ValueError):
            continue
        found.append(Cell(filename, text, tree))
    return found


def cell_source(cls: type) -> CellSource | None:
    """The joined text of the cells defining ``cls`` and what it uses, or None if not from cells.

    Only text is read: nothing is imported, compiled or executed.
    """
    own = set(_code_files(cls))
    cells = notebook_cells()
    by_name = {cell.filename: cell for cell in cells}
    roots = [cell for cell in cells if cell.filename in own]
    if not roots or not any(cls.__name__ in cell.defines for cell in roots):
        return None
    chosen = _closure(roots, cells)
    ordered = [cell for cell in cells if cell.filename in chosen]
    text = "\n\n".join(cell.text.rstrip("\n") for cell in ordered) + "\n"
    return CellSource(f"<cells of {cls.__qualname__}>", text,
                      tuple(c.filename for c in ordered if c.filename in by_name))


def load_cell_source(source: object) -> SourceFile | None:
    """``source`` (a Flow class or instance) parsed from its cells, or None when it has a file.

    Paths and modules, and classes whose source file ``inspect`` finds, return None: the
    ordinary loader reads those.
    """
    if isinstance(source, (str, os.PathLike, ModuleType)):
        return None
    cls = source if isinstance(source, type) else type(source)
    if cls.__module__ == "builtins" or _has_source_file(cls):
        return None
    found = cell_source(cls)
    if found is None:
        return None
    return parse_source(found.text, found.path, flow_hint=cls.__name__)


def _has_source_file(cls: type) -> bool:
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return False
    return path is not None and os.path.isfile(path)


def _closure(roots: list[Cell], cells: list[Cell]) -> set[str]:
    """The root cells plus, for every name they use, the latest cell defining it, transitively.

    Cells with a star import are always taken: they may define any name.
    """
    chosen = {cell.filename for cell in roots}
    chosen |= {cell.filename for cell in cells if "*" in cell.defines}
    pending = list(roots)
    while pending:
        cell = pending.pop()
        missing = cell.uses - cell.defines
        for name in sorted(missing):
            source = _latest_definition(name, cells)
            if source is not None and source.filename not in chosen:
                chosen.add(source.filename)
                pending.append(source)
    return chosen


def _latest_definition(name: str, cells: list[Cell]) -> Cell | None:
    for cell in reversed(cells):
        if name in cell.defines:
            return cell
    return None


def _code_files(cls: type) -> Iterator[str]:
    """The file names of the code objects of ``cls``'s own methods (and nested functions)."""
    for value in vars(cls).values():
        func = getattr(value, "__func__", value)
        if isinstance(value, property):
            func = value.fget
        code = getattr(func, "__code__", None)
        if code is not None:
            yield code.co_filename


def _bound(stmt: ast.stmt) -> Iterator[str]:
    if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        yield stmt.name
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            yield alias.asname or alias.name.partition(".")[0]
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    yield node.id
    elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For)):
        for child in stmt.body:
            yield from _bound(child)
