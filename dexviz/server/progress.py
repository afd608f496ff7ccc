"""The progress of reading a long history: a bar in a notebook, or a caller's callback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Progress", "make_progress"]


class Progress(Protocol):
    """Told after each page how many pages and events have been read."""

    def update(self, pages: int, events: int) -> None:
        """Report the counts so far."""

    def close(self) -> None:
        """The read ended."""


class _Callback:
    def __init__(self, call: Callable[[int, int], None]) -> None:
        self._call = call

    def update(self, pages: int, events: int) -> None:
        self._call(pages, events)

    def close(self) -> None:
        return None


class _Bar:
    """The notebook ProgressBar, counting events."""

    def __init__(self, title: str) -> None:
        from dexviz.widgets.progress import ProgressBar

        self._title = title
        self._bar: Any = ProgressBar(None)
        self._events = 0

    def update(self, pages: int, events: int) -> None:
        self._events = events
        self._bar.update(events, f"{self._title}: {events} events in {pages} pages")

    def close(self) -> None:
        self._bar.close(self._events)


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    kernel = get() if callable(get) else None
    return kernel is not None and "IPKernelApp" in getattr(kernel, "config", {})


def make_progress(choice: bool | Callable[[int, int], None] | None,
                  title: str) -> Progress | None:
    """The progress reporter for ``choice`` (see ``DexServer.history``), or None."""
    if callable(choice):
        return _Callback(choice)
    if choice is False or (choice is None and not _in_notebook()):
        return None
    try:
        return _Bar(title)
    except ImportError:
        return None
