"""A package's public names, each loaded from its defining module on first use (PEP 562).

``dexviz.sdk``, ``dexviz.history`` and ``dexviz.engine`` share it so that ``from dexviz import
Flow`` imports only the modules that name needs. Standard library only: the layers that may
import nothing else of dexviz may import this.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any

Getattr = Callable[[str], object]
Dir = Callable[[], list[str]]


def lazy_exports(
    namespace: MutableMapping[str, Any], home: Mapping[str, str]
) -> tuple[Getattr, Dir]:
    """Return a package's ``__getattr__`` and ``__dir__`` for the names ``home`` lists.

    ``namespace`` is the package's ``globals()`` (its ``__name__`` and ``__all__`` are read
    from it); ``home`` maps each public module, by its path inside the package, to the names it
    defines, space-separated. A name, once loaded, is kept in ``namespace``.
    """
    package = namespace["__name__"]
    module_of = {name: module for module, names in home.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        """Load the module that defines a public name on first use, and keep the name."""
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        """The module's names with the lazy ones, so they tab-complete before first use."""
        return sorted({*namespace, *namespace["__all__"]})

    return __getattr__, __dir__
