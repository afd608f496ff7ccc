"""The ``dex`` import hook: a meta-path finder that builds ``dex`` and its submodules from dexviz.

``install()`` puts one finder at the front of ``sys.meta_path``; ``import dex.runtime_errors``
then gets a real module object whose names are dexviz's. It refuses to shadow an installed
dex-python-sdk (or any other importable ``dex``) unless asked to with ``force=True``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

from dexviz.compat.modules import PACKAGE, SUBMODULES, module_names, resolve

DISTRIBUTION = "dex-python-sdk"
"""The PyPI distribution of the real Dex SDK."""

MARKER = "__dexviz_compat__"
"""Attribute set (True) on every module the compat layer builds."""


class DexAlreadyInstalledError(RuntimeError):
    """``install()`` found a real ``dex`` (dex-python-sdk or another module) it would shadow."""


class DexNameUnavailableError(ImportError):
    """A Dex name exists in dex-python-sdk but dexviz does not provide it."""


class _DexLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``dex`` and ``dex.<submodule>`` and fills them with dexviz's objects."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """Return a spec for the Dex modules this layer provides, None for anything else."""
        if module_names(fullname) is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, origin="dexviz.compat", is_package=fullname == PACKAGE
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        """Use the default module object."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        """Bind the module's Dex names; a package first imports all its submodules, as Dex."""
        names = module_names(module.__name__) or ()
        found, missing = resolve(names)
        module.__dict__.update(found)
        module.__dict__[MARKER] = True
        module.__dict__["__all__"] = sorted(found)
        module.__dict__["__getattr__"] = _missing_attribute(module.__name__, frozenset(missing))
        if module.__name__ == PACKAGE:
            module.__doc__ = "Dex's Python API, provided in-process by dexviz (dexviz.compat)."
            for sub in SUBMODULES:
                importlib.import_module(f"{PACKAGE}.{sub}")


def _missing_attribute(module_name: str, missing: frozenset[str]) -> Callable[[str], object]:
    def __getattr__(name: str) -> object:
        if name in missing:
            raise DexNameUnavailableError(
                f"{module_name}.{name} is part of dex-python-sdk, but dexviz does not provide it",
                name=module_name,
            )
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return __getattr__


class _State:
    """What install() changed, so uninstall() can undo exactly that."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loader: _DexLoader | None = None
        self.stashed: dict[str, ModuleType] = {}


_STATE = _State()


def installed_sdk_version() -> str | None:
    """The version of an installed dex-python-sdk distribution, or None."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _foreign_dex() -> str | None:
    """Describe a ``dex`` that is not ours and would be shadowed, or None."""
    version = installed_sdk_version()
    if version is not None:
        return f"{DISTRIBUTION} {version} is installed"
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and not getattr(loaded, MARKER, False):
        return f"a module named 'dex' is already imported ({getattr(loaded, '__file__', None)})"
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and not isinstance(spec.loader, _DexLoader):
        where = spec.origin or ", ".join(spec.submodule_search_locations or ()) or "sys.path"
        return f"a module named 'dex' is importable from {where}"
    return None


def _own_modules() -> list[str]:
    return [
        name
        for name, module in sys.modules.items()
        if (name == PACKAGE or name.startswith(PACKAGE + ".")) and getattr(module, MARKER, False)
    ]


def _stash_foreign() -> dict[str, ModuleType]:
    names = [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]
    return {name: sys.modules.pop(name) for name in names}


def install(*, force: bool = False) -> None:
    """Make ``import dex`` (and ``dex.runtime_errors``, ``dex._grpc_errors``, …) load dexviz.

    Call it before the application imports ``dex``. Calling it again is a no-op.

    Args:
        force: shadow a real ``dex`` deliberately (for this process, until ``uninstall()``);
            its already-imported modules are set aside and restored by ``uninstall()``.

    Raises:
        DexAlreadyInstalledError: dex-python-sdk (or another ``dex`` module) is installed or
            imported and ``force`` is False; the message names what was found.
    """
    with _STATE.lock:
        if _STATE.loader is not None:
            return
        if not force:
            foreign = _foreign_dex()
            if foreign is not None:
                raise DexAlreadyInstalledError(
                    f"dexviz.compat.install(): {foreign}; installing would shadow it. Uninstall "
                    f"it to run Dex applications in-process (pip uninstall {DISTRIBUTION}), or "
                    "call dexviz.compat.install(force=True) to shadow it in this process."
                )
        _STATE.stashed = _stash_foreign()
        _STATE.loader = _DexLoader()
        sys.meta_path.insert(0, _STATE.loader)
        importlib.invalidate_caches()


def uninstall() -> None:
    """Undo ``install()``: remove the hook and the ``dex`` modules it built; restore a real one.

    Application modules that imported ``dex`` keep the objects they hold. Calling it when the
    layer is not installed is a no-op.
    """
    with _STATE.lock:
        loader = _STATE.loader
        if loader is None:
            return
        if loader in sys.meta_path:
            sys.meta_path.remove(loader)
        for name in _own_modules():
            del sys.modules[name]
        sys.modules.update(_STATE.stashed)
        _STATE.stashed = {}
        _STATE.loader = None
        importlib.invalidate_caches()


def is_installed() -> bool:
    """Whether ``install()`` is in effect (``import dex`` resolves to dexviz)."""
    return _STATE.loader is not None
