"""Read a Flow's source file and parse it with ``ast``; nothing in it is imported or executed.

A source may be a path (``str`` or ``os.PathLike``, optionally ``"file.py:FlowName"``), an
already-imported module, or a Flow class or instance: for the last three only the file that
``inspect`` names is read, so the analysis is the same as for the path.
"""

from __future__ import annotations

import ast
import inspect
import os
from dataclasses import dataclass
from types import ModuleType

from dexviz.analysis.definition.errors import DefinitionSourceError
from dexviz.analysis.definition.reading import read_source_text

__all__ = ["SourceFile", "load_source", "parse_source"]


@dataclass(frozen=True)
class SourceFile:
    """A parsed source file.

    Attributes:
        path: The path as the caller gave it (or as ``inspect`` reported it).
        text: The decoded source text.
        tree: The ``ast`` module tree.
        flow_hint: The Flow class name implied by the source (a class, an instance, or a
            ``file.py:FlowName`` path), or None.
    """

    path: str
    text: str
    tree: ast.Module
    flow_hint: str | None = None


def load_source(source: object) -> SourceFile:
    """Read and parse ``source`` (a path, module, Flow class or Flow instance).

    Raises:
        FileNotFoundError: The path does not exist.
        TypeError: ``source`` is none of the accepted kinds.
        DefinitionSourceError: The file is not a readable regular source file, cannot be
            decoded, or has a syntax error (the message names file and line).
    """
    path, hint = _locate(source)
    return parse_source(read_source_text(path), path, flow_hint=hint)


def parse_source(text: str, path: str, *, flow_hint: str | None = None) -> SourceFile:
    """Parse ``text`` as the contents of ``path``; a syntax error names the file and line."""
    try:
        tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as error:
        raise DefinitionSourceError(
            path,
            f"syntax error: {error.msg}",
            code="syntax_error",
            line=error.lineno,
            col=None if error.offset is None else max(error.offset - 1, 0),
        ) from None
    except (RecursionError, MemoryError) as error:  # nesting beyond CPython's parser limits
        limit = "recursion" if isinstance(error, RecursionError) else "memory"
        raise DefinitionSourceError(
            path, f"too deep to parse (Python's parser ran out of {limit})", code="too_deep"
        ) from None
    except ValueError as error:  # null bytes in the source
        raise DefinitionSourceError(path, f"cannot parse: {error}", code="syntax_error") from None
    return SourceFile(path, text, tree, flow_hint)


def _locate(source: object) -> tuple[str, str | None]:
    if isinstance(source, (str, os.PathLike)):
        return _split_path(os.fspath(source))
    if isinstance(source, ModuleType):
        return _module_file(source), None
    cls = source if isinstance(source, type) else type(source)
    if cls.__module__ == "builtins":
        raise TypeError(
            "definition_graph() needs a path to a .py file, a module, or a Flow class or "
            f"instance; got {type(source).__name__} {source!r}"
        )
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):  # OSError: defined in a notebook cell or the REPL
        path = None
    if path is None:
        raise TypeError(
            f"cannot find the source file of {cls.__qualname__} (defined in module "
            f"{cls.__module__!r}); pass the path of the .py file that defines it"
        )
    return path, cls.__name__


def _split_path(text: str) -> tuple[str, str | None]:
    # "flows.py:ContractEditFlow" names the Flow, unless the whole text is an existing file.
    head, sep, tail = text.rpartition(":")
    if sep and head.endswith(".py") and tail.isidentifier() and not os.path.exists(text):
        return head, tail
    return text, None


def _module_file(module: ModuleType) -> str:
    path = getattr(module, "__file__", None)
    if not path or not str(path).endswith(".py"):
        raise TypeError(f"module {module.__name__} has no Python source file")
    return str(path)
