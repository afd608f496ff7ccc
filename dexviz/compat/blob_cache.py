"""An in-memory stand-in for Dex's blob cache (``open_blob_cache``), with Dex's interface.

Dex keeps large values in a native on-disk cache shared by Clients and Workers. In one process
nothing crosses a wire, so dexviz keeps the same interface in memory: bounded by ``max_bytes``,
least recently used entries evicted first, no file written to ``directory``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

DEFAULT_FREQUENCY_COUNTERS = 10_000
"""What ``frequency_counters=0`` means, as in Dex."""


@dataclass(frozen=True)
class BlobCacheConfig:
    """Configuration of a blob cache, validated as Dex does.

    Attributes:
        directory: Where Dex would keep the cache (dexviz writes nothing there; must be set).
        max_bytes: The most payload bytes kept (positive).
        frequency_counters: Dex's admission-policy size (0 means 10,000; not used in memory).
    """

    directory: str
    max_bytes: int
    frequency_counters: int = DEFAULT_FREQUENCY_COUNTERS

    def __post_init__(self) -> None:
        """Reject an empty directory, a non-positive size and negative counters."""
        if not self.directory:
            raise ValueError("BlobCacheConfig: directory is required")
        if self.max_bytes <= 0:
            raise ValueError(f"BlobCacheConfig: max_bytes must be positive, got {self.max_bytes}")
        if self.frequency_counters < 0:
            raise ValueError(
                "BlobCacheConfig: frequency_counters must not be negative, "
                f"got {self.frequency_counters}"
            )
        if self.frequency_counters == 0:
            object.__setattr__(self, "frequency_counters", DEFAULT_FREQUENCY_COUNTERS)


@runtime_checkable
class BlobCache(Protocol):
    """What Workers and Clients need from a blob cache (Dex's ``BlobCache`` protocol)."""

    @property
    def config(self) -> BlobCacheConfig:
        """The configuration the cache was opened with."""
        ...

    def get(self, blob_id: str) -> bytes | None:
        """The payload stored under ``blob_id``, or None."""
        ...

    def put(self, blob_id: str, payload: bytes) -> bool:
        """Offer a payload; True when it was admitted."""
        ...

    def delete(self, blob_id: str) -> None:
        """Remove one payload if present."""
        ...

    def delete_all(self) -> None:
        """Remove every payload; the cache stays open."""
        ...

    def close(self) -> None:
        """Release the cache (idempotent); other methods fail afterwards."""
        ...


class InMemoryBlobCache:
    """A thread-safe, size-bounded LRU map of blob id to bytes, implementing ``BlobCache``."""

    def __init__(self, config: BlobCacheConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._entries)} entries, {self._size} bytes"
        return f"InMemoryBlobCache(max_bytes={self._config.max_bytes}, {state})"

    @property
    def config(self) -> BlobCacheConfig:
        """The configuration the cache was opened with."""
        return self._config

    @property
    def size_bytes(self) -> int:
        """The payload bytes currently held."""
        return self._size

    def _check(self, blob_id: str) -> None:
        if self._closed:
            raise RuntimeError("this blob cache is closed")
        if not isinstance(blob_id, str) or not blob_id:
            raise ValueError(f"a blob id must be a non-empty string, got {blob_id!r}")

    def get(self, blob_id: str) -> bytes | None:
        """The payload stored under ``blob_id`` (now the most recently used), or None."""
        with self._lock:
            self._check(blob_id)
            payload = self._entries.get(blob_id)
            if payload is not None:
                self._entries.move_to_end(blob_id)
            return payload

    def put(self, blob_id: str, payload: bytes) -> bool:
        """Store a copy of ``payload``, evicting least recently used entries to fit.

        Returns:
            False (and stores nothing) when the payload alone exceeds ``max_bytes``.
        """
        data = bytes(payload)
        with self._lock:
            self._check(blob_id)
            if len(data) > self._config.max_bytes:
                return False
            self._remove(blob_id)
            while self._entries and self._size + len(data) > self._config.max_bytes:
                self._remove(next(iter(self._entries)))
            self._entries[blob_id] = data
            self._size += len(data)
            return True

    def _remove(self, blob_id: str) -> None:
        old = self._entries.pop(blob_id, None)
        if old is not None:
            self._size -= len(old)

    def delete(self, blob_id: str) -> None:
        """Remove one payload if present."""
        with self._lock:
            self._check(blob_id)
            self._remove(blob_id)

    def delete_all(self) -> None:
        """Remove every payload; the cache stays open."""
        with self._lock:
            self._check("all")
            self._entries.clear()
            self._size = 0

    def close(self) -> None:
        """Drop every payload and close the cache (idempotent)."""
        with self._lock:
            self._entries.clear()
            self._size = 0
            self._closed = True


def open_blob_cache(config: BlobCacheConfig) -> BlobCache:
    """Open an in-memory blob cache with Dex's interface (nothing is written to disk)."""
    if not isinstance(config, BlobCacheConfig):
        raise TypeError(
            f"open_blob_cache takes a BlobCacheConfig(directory, max_bytes), got {config!r}"
        )
    return InMemoryBlobCache(config)
