"""Fixtures of the compat tests: every test leaves ``sys.modules``, ``sys.meta_path`` and the hub
as it found them, so ``dex`` never leaks into other tests."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from dexviz import compat
from tests.compat.helpers import APPS_PACKAGE


def _dex_modules() -> dict[str, ModuleType]:
    return {n: m for n, m in sys.modules.items() if n == "dex" or n.startswith("dex.")}


@pytest.fixture(autouse=True)
def restore_import_state() -> Iterator[None]:
    """Undo install(), drop every ``dex`` and app module, and check nothing else changed."""
    before_modules = _dex_modules()
    before_path = list(sys.meta_path)
    yield
    compat.uninstall()
    for name in [n for n in sys.modules if n.startswith(APPS_PACKAGE)]:
        del sys.modules[name]
    for name in set(_dex_modules()) - set(before_modules):
        del sys.modules[name]
    sys.modules.update(before_modules)
    assert sys.meta_path == before_path
    importlib.invalidate_caches()


@pytest.fixture(autouse=True)
def hub_left_empty() -> Iterator[None]:
    """Every Worker and Client a test builds on the process-wide hub must be closed by it."""
    before = compat.HUB.held()
    yield
    assert compat.HUB.held() == before, "this test left Workers or Clients open"


@pytest.fixture
def dex() -> Iterator[ModuleType]:
    """``dexviz.compat`` installed; yields the ``dex`` package."""
    compat.install()
    yield importlib.import_module("dex")
