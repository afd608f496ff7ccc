"""The history layer: events, their kinds, and the History object (standard library only)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from dexviz.history.event import Event
    from dexviz.history.history import History, HistoryFormatError
    from dexviz.history.kinds import SEMANTIC_KINDS, EventKind

__all__ = ["SEMANTIC_KINDS", "Event", "EventKind", "History", "HistoryFormatError"]

_HOME = {
    "event": "Event",
    "history": "History HistoryFormatError",
    "kinds": "SEMANTIC_KINDS EventKind",
}
"""Each public module of the package and the names it defines, space-separated."""

_MODULE_OF = {name: module for module, names in _HOME.items() for name in names.split()}


def __getattr__(name: str) -> object:
    """Load the module that defines a public name on first use, and keep the name."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names with the lazy ones, so they tab-complete before first use."""
    return sorted({*globals(), *__all__})
