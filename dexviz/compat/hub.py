"""The process-wide map from Dex server address to the live engine its Workers and Clients share.

A Dex application names its server by address; in one process that address is only a key
(``"inproc:tests"`` works, nothing is dialled). Every Worker and Client holds a lease on its
address; the first Worker to register creates the live engine with its Registry; the last
lease released closes the engine, which joins its threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from dexviz.engine.engine import Engine
from dexviz.history._plural import plural
from dexviz.sdk.errors import FlowDefinitionError
from dexviz.sdk.registry import Registry


class LiveEngine(Protocol):
    """What the compat layer needs from a live engine (``dexviz.Engine(..., mode="live")``)."""

    def client(self) -> Any:
        """A thread-safe Client of this engine."""
        ...

    def async_client(self) -> Any:
        """An AsyncClient bound to the calling event loop."""
        ...

    def close(self) -> None:
        """Stop the engine and join its threads (idempotent)."""
        ...


EngineFactory = Callable[[Registry], LiveEngine]


def live_engine(registry: Registry) -> LiveEngine:
    """Build the live engine that runs ``registry``'s Flows on the wall clock."""
    return Engine(registry, mode="live")


class NoWorkerError(RuntimeError):
    """A Client was used on a server address where no Worker has been built."""


@dataclass
class _Slot:
    holders: int = 0
    registry: Registry | None = None
    engine: LiveEngine | None = None


def _check_address(address: object) -> str:
    if not isinstance(address, str) or not address:
        raise ValueError(f"a server address must be a non-empty string, got {address!r}")
    return address


def _serves(engine_registry: Registry, registry: Registry) -> bool:
    """Whether every Flow of ``registry`` is one the engine's Registry runs."""
    if registry is engine_registry:
        return True
    try:
        for flow in registry.flows:
            engine_registry.definition(flow)
    except FlowDefinitionError:
        return False
    return True


class Hub:
    """Shared live engines by server address, reference-counted by leases.

    Args:
        engine_factory: builds the engine for a Registry (the live ``Engine`` by default).
    """

    def __init__(self, engine_factory: EngineFactory = live_engine) -> None:
        self._factory = engine_factory
        self._lock = threading.Lock()
        self._slots: dict[str, _Slot] = {}

    def __repr__(self) -> str:
        with self._lock:
            slots = sorted(self._slots.items())
            parts = [f"{a!r}: {plural(s.holders, 'holder')}" for a, s in slots]
        return f"Hub({{{', '.join(parts)}}})"

    def lease(self, address: str) -> Lease:
        """Take a hold on ``address`` (released with ``Lease.release()``)."""
        key = _check_address(address)
        with self._lock:
            self._slots.setdefault(key, _Slot()).holders += 1
        return Lease(self, key)

    def addresses(self) -> tuple[str, ...]:
        """The server addresses that have a running engine, sorted."""
        with self._lock:
            return tuple(sorted(a for a, s in self._slots.items() if s.engine is not None))

    def held(self) -> dict[str, int]:
        """How many Workers and Clients hold each server address (empty when all closed)."""
        with self._lock:
            return {a: s.holders for a, s in sorted(self._slots.items())}

    def engine(self, address: str) -> LiveEngine:
        """The live engine serving ``address``.

        Raises:
            NoWorkerError: no Worker has been built for ``address`` (or all were closed).
        """
        with self._lock:
            slot = self._slots.get(address)
            if slot is not None and slot.engine is not None:
                return slot.engine
            known = [a for a, s in self._slots.items() if s.engine is not None]
        raise NoWorkerError(
            f"no dexviz Worker serves server address {address!r}: build "
            f"Worker(registry, blob_cache, WorkerOptions(server_address={address!r})) first"
            + (f" (addresses with a Worker: {', '.join(sorted(known))})" if known else "")
        )

    def _register(self, address: str, registry: Registry) -> LiveEngine:
        with self._lock:
            slot = self._slots[address]
            if slot.engine is None:
                slot.engine = self._factory(registry)
                slot.registry = registry
                return slot.engine
            assert slot.registry is not None
            if not _serves(slot.registry, registry):
                raise ValueError(
                    f"server address {address!r} already runs {slot.registry!r}; a Worker for "
                    f"{registry!r} needs the same Flows (dexviz runs one Registry per address: "
                    "build one Registry with every Flow, or use another server_address)"
                )
            return slot.engine

    def _release(self, address: str) -> None:
        with self._lock:
            slot = self._slots[address]
            slot.holders -= 1
            if slot.holders > 0:
                return
            del self._slots[address]
        if slot.engine is not None:
            slot.engine.close()  # outside the lock: handlers may still be using Clients


class Lease:
    """One Worker's or Client's hold on a server address; the last release closes the engine."""

    def __init__(self, hub: Hub, address: str) -> None:
        self._hub = hub
        self._address = address
        self._lock = threading.Lock()
        self._released = False

    def __repr__(self) -> str:
        return f"Lease({self._address!r}{', released' if self._released else ''})"

    @property
    def address(self) -> str:
        """The server address held."""
        return self._address

    @property
    def released(self) -> bool:
        """Whether ``release()`` was called."""
        return self._released

    def register_worker(self, registry: Registry) -> LiveEngine:
        """Register a Worker's Registry: create the engine, or check it runs the same Flows."""
        self._check()
        return self._hub._register(self._address, registry)

    def engine(self) -> LiveEngine:
        """The live engine of this address (NoWorkerError if no Worker registered yet)."""
        self._check()
        return self._hub.engine(self._address)

    def release(self) -> None:
        """Give the hold back (idempotent); the last one closes the engine."""
        with self._lock:
            if self._released:
                return
            self._released = True
        self._hub._release(self._address)

    def _check(self) -> None:
        if self._released:
            raise RuntimeError(f"the lease on server address {self._address!r} was released")


HUB = Hub()
"""The process-wide hub every compat Worker and Client uses."""


def engine_for(server_address: str) -> Engine:
    """The live engine shared by the Workers and Clients of ``server_address``.

    Use it to look at what a Dex application ran: ``engine_for("inproc:app").history(id)``.

    Raises:
        NoWorkerError: no Worker has been built for ``server_address``.
    """
    return cast(Engine, HUB.engine(server_address))


def server_addresses() -> tuple[str, ...]:
    """The server addresses that currently have a live engine."""
    return HUB.addresses()
