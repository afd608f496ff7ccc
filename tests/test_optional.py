"""dexviz._optional.require: lazy imports that name the pip extra when a package is missing."""

from __future__ import annotations

import importlib.abc
import sys
import tomllib
from pathlib import Path

import pytest

from dexviz import _optional
from dexviz._optional import EXTRAS, HEAVY_MODULES, MissingExtraError, require

REPO_ROOT = Path(__file__).resolve().parent.parent


class _Blocker(importlib.abc.MetaPathFinder):
    """Makes one top-level package (and its submodules) impossible to import."""

    def __init__(self, blocked: str) -> None:
        self.blocked = blocked

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == self.blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def block(monkeypatch):
    """Block a package for one test: remove it from sys.modules and refuse to find it."""

    def _block(package: str) -> None:
        for name in list(sys.modules):
            if name == package or name.startswith(package + "."):
                monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr(sys, "meta_path", [_Blocker(package), *sys.meta_path])

    return _block


def test_require_returns_the_imported_module():
    module = require("json", "table")
    assert module is sys.modules["json"]


def test_require_imports_submodules():
    module = require("email.mime.text", "plot")
    assert module.__name__ == "email.mime.text"


def test_missing_module_names_module_and_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(MissingExtraError) as caught:
        require("graphviz", "graph")
    message = str(caught.value)
    assert "'graphviz'" in message
    assert 'pip install "dexviz[graph]"' in message
    assert "not installed" in message
    assert caught.value.module == "graphviz"
    assert caught.value.extra == "graph"
    assert caught.value.name == "graphviz"


def test_missing_extra_error_is_an_import_error(block):
    block("matplotlib")
    with pytest.raises(ImportError, match=r'pip install "dexviz\[plot\]"'):
        require("matplotlib.pyplot", "plot")


def test_error_chains_the_original_import_error(block):
    block("pandas")
    with pytest.raises(MissingExtraError) as caught:
        require("pandas", "table")
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_missing_dependency_of_an_installed_package_is_named(tmp_path, monkeypatch):
    (tmp_path / "dexviz_fake_plotting.py").write_text("import dexviz_fake_missing_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as caught:
        require("dexviz_fake_plotting", "plot")
    message = str(caught.value)
    assert "'dexviz_fake_plotting'" in message
    assert "its dependency 'dexviz_fake_missing_dep' is missing" in message
    assert 'pip install "dexviz[plot]"' in message


def test_unknown_extra_is_a_programming_error():
    with pytest.raises(ValueError, match=r"unknown dexviz extra: 'graphs' \(must be one of"):
        require("json", "graphs")


def test_known_module_with_the_wrong_extra_is_a_programming_error():
    with pytest.raises(ValueError, match=r"'pandas' is installed by the extra 'table', not 'plot'"):
        require("pandas", "plot")


def test_all_extra_is_accepted_for_any_known_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(MissingExtraError, match=r"dexviz\[all\]"):
        require("ipywidgets", "all")


def test_extras_match_pyproject():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    # "test" and "docs" install development tools, never a module dexviz imports.
    declared = set(project["optional-dependencies"]) - {"test", "docs"}
    assert declared == set(EXTRAS)
    requirements = project["optional-dependencies"]
    for module, extra in HEAVY_MODULES.items():
        names = " ".join(requirements[extra]).lower()
        assert module.lower() in names, f"{module} is not installed by the extra {extra!r}"


def test_heavy_modules_are_the_ones_the_layering_test_guards():
    assert set(HEAVY_MODULES) == {"graphviz", "matplotlib", "pandas", "ipywidgets", "IPython"}


def test_optional_module_imports_no_heavy_package():
    names = set(vars(_optional))
    assert not names & set(HEAVY_MODULES)
