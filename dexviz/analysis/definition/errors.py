"""The error raised when a source cannot be analysed at all (no graph can be built)."""

from __future__ import annotations

__all__ = ["DefinitionSourceError"]


class DefinitionSourceError(ValueError):
    """The source has no analysable Flow: a syntax error, no Flow class, or an ambiguous choice.

    Problems inside an otherwise readable Flow (a dynamic ``go_to`` target, an unreadable
    WaitFor) are not raised; they become diagnostics of the graph.

    Attributes:
        path: The file that was read.
        line: The 1-based line the problem is on, when there is one.
        col: The 0-based column, when there is one.
        code: A Dex diagnostic code: ``syntax_error``, ``flow_not_found`` or ``multiple_flows``.
    """

    def __init__(
        self, path: str, message: str, *, code: str, line: int | None = None,
        col: int | None = None,
    ) -> None:
        where = path if line is None else f"{path}:{line}:{(col or 0) + 1}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.col = col
        self.code = code
