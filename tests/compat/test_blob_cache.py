"""The in-memory blob cache: Dex's BlobCacheConfig validation and BlobCache interface."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dexviz.compat import BlobCache, BlobCacheConfig, InMemoryBlobCache, open_blob_cache


def test_config_validates_like_dex() -> None:
    assert BlobCacheConfig("/tmp/cache", 10).frequency_counters == 10_000
    assert BlobCacheConfig("/tmp/cache", 10, frequency_counters=0).frequency_counters == 10_000
    assert BlobCacheConfig("/tmp/cache", 10, frequency_counters=5).frequency_counters == 5
    with pytest.raises(ValueError, match="directory is required"):
        BlobCacheConfig("", 10)
    with pytest.raises(ValueError, match="max_bytes must be positive, got 0"):
        BlobCacheConfig("/tmp/cache", 0)
    with pytest.raises(ValueError, match="frequency_counters must not be negative"):
        BlobCacheConfig("/tmp/cache", 10, frequency_counters=-1)


def test_open_blob_cache_returns_a_blob_cache_and_writes_no_file(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = open_blob_cache(BlobCacheConfig(str(directory), 1 << 20))
    assert isinstance(cache, BlobCache)
    assert cache.config.directory == str(directory)
    assert cache.put("a", b"payload")
    assert cache.get("a") == b"payload"
    assert not directory.exists()
    cache.close()


def test_open_blob_cache_rejects_anything_but_a_config() -> None:
    with pytest.raises(TypeError, match="takes a BlobCacheConfig"):
        open_blob_cache("/tmp/cache")  # type: ignore[arg-type]


def test_put_get_delete_and_delete_all() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 100))
    assert cache.get("missing") is None
    assert cache.put("a", bytearray(b"12345"))
    assert cache.get("a") == b"12345" and isinstance(cache.get("a"), bytes)
    assert cache.put("a", b"xy")  # replacing an entry frees its old size
    assert cache.size_bytes == 2
    cache.delete("a")
    cache.delete("a")
    assert cache.get("a") is None
    cache.put("b", b"1")
    cache.put("c", b"2")
    cache.delete_all()
    assert (cache.get("b"), cache.get("c"), cache.size_bytes) == (None, None, 0)


def test_least_recently_used_entries_are_evicted_to_fit_max_bytes() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 10))
    cache.put("a", b"aaaa")
    cache.put("b", b"bbbb")
    cache.get("a")  # b is now the least recently used
    assert cache.put("c", b"cccc")
    assert cache.get("b") is None
    assert cache.get("a") == b"aaaa" and cache.get("c") == b"cccc"
    assert cache.size_bytes == 8


def test_a_payload_larger_than_the_cache_is_rejected_not_stored() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 4))
    cache.put("small", b"ok")
    assert cache.put("big", b"12345") is False
    assert cache.get("big") is None and cache.get("small") == b"ok"


def test_blob_ids_must_be_non_empty_strings() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 4))
    with pytest.raises(ValueError, match="non-empty string, got ''"):
        cache.put("", b"x")
    with pytest.raises(ValueError, match="non-empty string"):
        cache.get(None)  # type: ignore[arg-type]


def test_close_is_idempotent_and_later_use_fails() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 4))
    cache.put("a", b"x")
    cache.close()
    cache.close()
    assert "closed" in repr(cache)
    for call in (lambda: cache.get("a"), lambda: cache.put("a", b"x"), cache.delete_all):
        with pytest.raises(RuntimeError, match="blob cache is closed"):
            call()


def test_concurrent_puts_keep_the_size_bound() -> None:
    cache = InMemoryBlobCache(BlobCacheConfig("/tmp/cache", 64))

    def writer(k: int) -> None:
        for i in range(200):
            cache.put(f"{k}-{i % 20}", bytes(i % 9))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0 < cache.size_bytes <= 64
