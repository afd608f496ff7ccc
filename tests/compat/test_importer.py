"""dexviz.compat.install(): ``import dex`` and its submodules resolve to dexviz, and a real Dex
SDK is never shadowed silently."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import sys
from enum import Enum
from pathlib import Path
from types import ModuleType

import pytest

import dexviz.compat.client
import dexviz.compat.worker
import dexviz.sdk
from dexviz import compat
from dexviz.compat.modules import SUBMODULES, TOP_LEVEL

# Names real Dex applications import from a submodule, by module (both SDK generations).
APPLICATION_IMPORTS = {
    "dex.runtime_errors": ("FlowNotFoundError", "FlowAlreadyStartedError", "DexServiceError"),
    "dex.flow_info": ("FlowStatus", "FlowInfo"),
    "dex.flow_result": ("FlowResult", "StepCompletion"),
    "dex._grpc_errors": ("retry_after", "RetryAfterError"),
    "dex.flow": ("Flow", "Registry", "rpc", "RPCResult", "PersistenceSchema"),
    "dex.step": ("Step", "StepDecision", "go_to", "go_to_many", "go_to_multi", "DecisionKind"),
    "dex.wait": ("Wait", "WaitKind"),
    "dex.condition": ("Condition", "ChannelCondition", "TimerCondition"),
    "dex.timer": ("Timer",),
    "dex.channel": ("Channel", "ChannelMap"),
    "dex.attribute": ("Attribute", "AttributeMap", "IndexType"),
    "dex.context": ("Context", "AsyncContext"),
    "dex.client": ("Client",),
    "dex.async_client": ("AsyncClient",),
    "dex.worker": ("Worker", "WorkerOptions"),
    "dex.async_worker": ("AsyncWorker",),
    "dex.codec": ("JsonCodec", "CodecRegistry", "STRING"),
    "dex.flow_options": ("StartFlowOptions", "StopFlowOptions", "IdReusePolicy"),
    "dex.flow_config": ("FlowConfig",),
    "dex.step_execution": ("StepExecutionId", "TimerId"),
    "dex.subflow": ("SubFlow",),
    "dex.blob_cache": ("open_blob_cache", "BlobCacheConfig", "BlobCache"),
    "dex.client_options": ("ClientOptions",),
    "dex.worker_options": ("WorkerOptions", "WorkerTarget"),
}


@pytest.mark.parametrize("module_name", sorted(APPLICATION_IMPORTS))
def test_application_submodule_imports_resolve_to_dexviz(module_name: str, dex: ModuleType) -> None:
    module = importlib.import_module(module_name)
    for name in APPLICATION_IMPORTS[module_name]:
        value = getattr(module, name)
        assert value is getattr(dex, name, value)  # one object, wherever it is imported from
    assert module.__dexviz_compat__ is True
    assert sys.modules[module_name] is module


def test_dex_is_a_package_exporting_the_sdk_objects(dex: ModuleType) -> None:
    assert dex.__path__ == []  # a package: submodules import
    assert dex.Flow is dexviz.sdk.Flow
    assert dex.retry_after is dexviz.sdk.retry_after
    assert dex.Worker is dexviz.compat.worker.Worker
    assert dex.Client is dexviz.compat.client.Client
    assert dex.open_blob_cache is compat.open_blob_cache
    assert dex.runtime_errors.FlowNotFoundError is dexviz.sdk.FlowNotFoundError
    assert set(dex.__all__) <= set(TOP_LEVEL)
    namespace: dict[str, object] = {}
    exec("from dex import *", namespace)
    assert namespace["Registry"] is dexviz.sdk.Registry
    assert "DecisionKind" not in dex.__all__  # as in Dex: only dex.step has it


def test_every_submodule_in_the_table_imports(dex: ModuleType) -> None:
    for sub in SUBMODULES:
        module = importlib.import_module(f"dex.{sub}")
        assert getattr(dex, sub) is module


def test_unknown_submodule_is_module_not_found(dex: ModuleType) -> None:
    with pytest.raises(ModuleNotFoundError, match="dex.no_such_module"):
        importlib.import_module("dex.no_such_module")


def test_dex_name_dexviz_lacks_raises_a_clear_import_error(dex: ModuleType) -> None:
    missing = [
        n
        for n in SUBMODULES["credential"]
        if n not in vars(importlib.import_module("dex.credential"))
    ]
    assert missing, "dexviz now provides every credential name; pick another missing one"
    with pytest.raises(
        compat.DexNameUnavailableError, match=f"dex.credential.{missing[0]} is part"
    ):
        exec(f"from dex.credential import {missing[0]}", {})
    with pytest.raises(AttributeError, match="has no attribute 'nonsense'"):
        _ = dex.nonsense


def test_install_twice_is_a_no_op_and_uninstall_removes_every_dex_module() -> None:
    before = list(sys.meta_path)
    compat.install()
    compat.install()
    assert compat.is_installed()
    assert len(sys.meta_path) == len(before) + 1
    importlib.import_module("dex.runtime_errors")
    compat.uninstall()
    compat.uninstall()
    assert not compat.is_installed()
    assert sys.meta_path == before
    assert not [n for n in sys.modules if n == "dex" or n.startswith("dex.")]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dex")


def _fake_dex_sdk(root: Path, version: str = "1.23.0") -> None:
    """A tiny stand-in for an installed dex-python-sdk: a distribution and a ``dex`` package."""
    info = root / f"dex_python_sdk-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: dex-python-sdk\nVersion: {version}\n", encoding="utf-8"
    )
    package = root / "dex"
    package.mkdir()
    (package / "__init__.py").write_text("REAL_SDK = True\n", encoding="utf-8")


def test_installed_dex_python_sdk_is_not_shadowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dex_sdk(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert compat.installed_sdk_version() == "1.23.0"
    with pytest.raises(
        compat.DexAlreadyInstalledError, match=r"dex-python-sdk 1\.23\.0 is installed"
    ):
        compat.install()
    assert not compat.is_installed()
    assert importlib.import_module("dex").REAL_SDK is True


def test_force_shadows_the_real_sdk_until_uninstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dex_sdk(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = importlib.import_module("dex")
    compat.install(force=True)
    shadow = importlib.import_module("dex")
    assert shadow is not real and shadow.Flow is dexviz.sdk.Flow
    compat.uninstall()
    assert importlib.import_module("dex") is real


def test_another_module_named_dex_is_not_shadowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dex.py").write_text("OTHER = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(compat.DexAlreadyInstalledError, match="importable from .*dex.py"):
        compat.install()


def test_sdk_version_lookup_uses_the_distribution_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    def version(name: str) -> str:
        if name == "dex-python-sdk":
            return "0.2.0"
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(compat.DexAlreadyInstalledError, match="dex-python-sdk 0.2.0.*force=True"):
        compat.install()


# Dex 1.23's enum members and values, for enums an application sees through ``dex``.
DEX_ENUM_VALUES: dict[str, dict[str, object]] = {
    "dex.flow_info.FlowStatus": {
        "RUNNING": "running", "COMPLETED": "completed", "FAILED": "failed",
        "CANCELED": "canceled", "TERMINATED": "terminated",
        "SERVER_SIDE_TIMEOUT_INTERNAL_ONLY": "server_side_timeout_internal_only",
        "CONTINUED_AS_NEW": "continued_as_new",
    },
    "dex.step.StepDurability": {"DEFAULT": "default", "SYNC": "sync", "ASYNC": "async"},
    "dex.step.WaitForFailurePolicy": {"FAIL_FLOW": "fail_flow", "PROCEED": "proceed"},
    "dex.flow_options.StopType": {"CANCEL": "cancel", "TERMINATE": "terminate", "FAIL": "fail"},
    "dex.attribute.IndexType": {
        "KEYWORD": "keyword", "FULL_TEXT": "full_text", "KEYWORD_ARRAY": "keyword_array",
        "INT": "int", "DOUBLE": "double", "BOOL": "bool", "DATETIME": "datetime",
    },
    "dex.step.DecisionKind": {
        "NEXT": "next", "GRACEFUL_COMPLETE": "graceful_complete",
        "FORCE_COMPLETE": "force_complete",
        "FORCE_COMPLETE_IF_CHANNELS_EMPTY": "force_complete_if_channels_empty",
        "FORCE_FAIL": "force_fail", "DEAD_END": "dead_end",
    },
    "dex.wait.WaitKind": {
        "SKIP_IMMEDIATELY": "skip_immediately", "ALL_OF": "all_of", "ANY_OF": "any_of",
        "ANY_COMBINATION_OF": "any_combination_of",
    },
}  # fmt: skip


@pytest.mark.parametrize(
    "path",
    sorted(DEX_ENUM_VALUES),
)
def test_enums_keep_dex_members_and_values(path: str, dex: ModuleType) -> None:
    module_name, _, name = path.rpartition(".")
    enum_type = getattr(importlib.import_module(module_name), name)
    assert issubclass(enum_type, Enum)
    assert {m.name: m.value for m in enum_type} == DEX_ENUM_VALUES[path]


def test_a_dex_namespace_folder_is_not_shadowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dex").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        compat.DexAlreadyInstalledError, match=f"importable from {re.escape(str(tmp_path))}"
    ):
        compat.install()
