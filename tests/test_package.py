"""The ``dexviz`` package: lazy public names (PEP 562), tab completion, and light imports."""

from __future__ import annotations

import subprocess
import sys

import dexviz
import dexviz.sdk


def test_every_sdk_name_is_a_dexviz_name() -> None:
    assert set(dexviz._SDK_NAMES) == set(dexviz.sdk.__all__)


def test_every_public_name_resolves_to_the_owning_module_object() -> None:
    for name in dexviz.__all__:
        assert getattr(dexviz, name) is not None, name
    assert dexviz.Flow is dexviz.sdk.Flow
    assert dexviz.go_to is dexviz.sdk.go_to


def test_dir_lists_lazy_names_before_first_use() -> None:
    names = dir(dexviz)
    assert {"Engine", "simulate", "Flow", "timeline", "Debugger", "__version__"} <= set(names)
    assert names == sorted(names)


def test_unknown_name_raises_attribute_error() -> None:
    try:
        dexviz.NoSuchName  # noqa: B018 - the lookup is the test
    except AttributeError as error:
        assert "NoSuchName" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_import_dexviz_loads_neither_engine_nor_sdk() -> None:
    loaded = _modules_after("import dexviz")
    assert not {"dexviz.engine", "dexviz.sdk", "asyncio"} & loaded


def test_import_history_pulls_neither_engine_nor_asyncio() -> None:
    loaded = _modules_after("import dexviz.history")
    assert not {"dexviz.engine", "asyncio", "concurrent.futures"} & loaded


def test_engine_import_defers_asyncio_and_uuid() -> None:
    loaded = _modules_after("from dexviz import Engine, Flow, simulate")
    assert not {"asyncio", "uuid", "concurrent.futures", "logging"} & loaded


def test_engine_import_loads_no_heavy_package_nor_unused_engine_parts() -> None:
    loaded = _modules_after("from dexviz import Engine, Flow, go_to")
    heavy = {"pandas", "matplotlib", "graphviz", "ipywidgets", "IPython", "numpy"}
    assert not heavy & {name.split(".")[0] for name in loaded}
    # Loaded only when used: the Client's operations, the SQLite store and its open-time
    # check, OpenSSL's digests (history files) and the notebook's HTML escaping.
    unused = {
        "dexviz.engine.client", "dexviz.engine.sqlite.sqlite_store",
        "dexviz.engine.sqlite.sqlite_check", "hashlib", "html",
    }  # fmt: skip
    assert not unused & loaded


def test_lazy_package_names_resolve_to_their_defining_modules() -> None:
    import dexviz.engine
    import dexviz.history
    from dexviz.engine.simulate import simulate
    from dexviz.engine.sqlite.sqlite_store import SQLiteStore
    from dexviz.sdk.flow import Flow

    assert dexviz.sdk.Flow is Flow
    assert dexviz.engine.SQLiteStore is SQLiteStore
    assert dexviz.engine.simulate is simulate  # the function, not its module
    for package in (dexviz.sdk, dexviz.engine, dexviz.history):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
        assert set(package.__all__) <= set(dir(package))
