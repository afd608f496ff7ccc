"""Shared helpers of the compat tests."""

from __future__ import annotations

import importlib
from types import ModuleType

APPS_PACKAGE = "tests.compat.apps"
"""Where the test applications live; they import ``dex``, so only after install()."""


def load_app(name: str) -> ModuleType:
    """Import a test application module (it imports ``dex``, so install() must come first)."""
    return importlib.import_module(f"{APPS_PACKAGE}.{name}")
