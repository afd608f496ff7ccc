"""Lazy imports of optional packages, with an error that names the pip extra to install.

This is the one place that knows which optional package belongs to which extra of
``pyproject.toml``; viz and widgets call :func:`require` inside the function that needs the
package, so ``import dexviz`` never loads graphviz, matplotlib, pandas, ipywidgets or IPython.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType, ModuleType

__all__ = ["EXTRAS", "HEAVY_MODULES", "MissingExtraError", "require"]

EXTRAS = frozenset(
    {"graph", "plot", "table", "notebook", "progress", "server", "cluster", "all"}
)
"""The extras declared in ``pyproject.toml`` that install optional packages."""

HEAVY_MODULES = MappingProxyType(
    {
        "graphviz": "graph",
        "matplotlib": "plot",
        "pandas": "table",
        "ipywidgets": "notebook",
        "IPython": "notebook",
    }
)
"""Each optional top-level package and the smallest extra that installs it."""


class MissingExtraError(ImportError):
    """An optional package is not installed; the message says which extra installs it.

    Attributes:
        module: The module that could not be imported.
        extra: The dexviz extra that installs it.
    """

    def __init__(self, module: str, extra: str, reason: str) -> None:
        super().__init__(
            f"{module!r} is needed for this feature but could not be imported ({reason}); "
            f'install it with: pip install "dexviz[{extra}]"',
            name=module,
        )
        self.module = module
        self.extra = extra


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` now and return it, or explain which extra installs it.

    Args:
        module: Dotted module name, e.g. ``"graphviz"`` or ``"matplotlib.pyplot"``.
        extra: The dexviz extra that provides it, e.g. ``"graph"``.

    Returns:
        The imported module (cached by Python after the first call).

    Raises:
        MissingExtraError: The module, or a package it needs, cannot be imported.
        ValueError: ``extra`` is not one of :data:`EXTRAS`, or it does not provide a known
            optional package (a programming error in the caller).

    Examples:
        >>> require("json", "table").__name__
        'json'
    """
    _check_extra(module, extra)
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(module, extra, _reason(module, error)) from error


def _check_extra(module: str, extra: str) -> None:
    if extra not in EXTRAS:
        raise ValueError(f"unknown dexviz extra: {extra!r} (must be one of {sorted(EXTRAS)})")
    expected = HEAVY_MODULES.get(module.partition(".")[0])
    if expected is not None and extra not in (expected, "all"):
        raise ValueError(
            f"{module!r} is installed by the extra {expected!r}, not {extra!r}; "
            f"call require({module!r}, {expected!r})"
        )


def _reason(module: str, error: ImportError) -> str:
    missing = error.name
    top = module.partition(".")[0]
    if missing is None or missing in (module, top):
        return "it is not installed"
    # The package is present but one of its own dependencies is not.
    return f"its dependency {missing!r} is missing: {error}"
