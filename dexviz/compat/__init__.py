"""Run Dex applications unchanged in-process: ``import dex`` resolves to dexviz.

Call ``dexviz.compat.install()`` before the application imports ``dex``. Its Flows, and its
wiring code that builds ``Registry``, ``open_blob_cache(...)``, ``Worker``/``AsyncWorker`` and
``Client``/``AsyncClient``, then run on a live in-process engine: Workers and Clients with the
same ``server_address`` (an opaque key, e.g. ``"inproc:app"``) share one engine, and
``engine_for(address)`` gives it back for histories and views. An installed dex-python-sdk is
never shadowed silently: ``install()`` raises ``DexAlreadyInstalledError`` naming it.
"""

from dexviz.compat.async_client import AsyncClient
from dexviz.compat.blob_cache import BlobCache, BlobCacheConfig, InMemoryBlobCache, open_blob_cache
from dexviz.compat.client import Client
from dexviz.compat.hub import HUB, Hub, Lease, NoWorkerError, engine_for, server_addresses
from dexviz.compat.importer import (
    DexAlreadyInstalledError,
    DexNameUnavailableError,
    install,
    installed_sdk_version,
    is_installed,
    uninstall,
)
from dexviz.compat.worker import AsyncWorker, Worker

__all__ = [
    "HUB",
    "AsyncClient",
    "AsyncWorker",
    "BlobCache",
    "BlobCacheConfig",
    "Client",
    "DexAlreadyInstalledError",
    "DexNameUnavailableError",
    "Hub",
    "InMemoryBlobCache",
    "Lease",
    "NoWorkerError",
    "Worker",
    "engine_for",
    "install",
    "installed_sdk_version",
    "is_installed",
    "open_blob_cache",
    "server_addresses",
    "uninstall",
]
