"""Dropping the process-wide description caches once an exploration is over.

The fingerprints cache what they describe by identity (``fingerprint``, ``canonical_text``,
``canonical_memo``, ``state_key``, ``stateful``): each entry holds its object so that its id is
not reused while cached. After a search those entries would keep its snapshots' runs and
executions alive for the life of the process; ``release_caches`` lets them go.
"""

from __future__ import annotations

from dexviz.explore import canonical, canonical_text, fingerprint, state_key, stateful

__all__ = ["release_caches", "CACHES"]

CACHES = (
    fingerprint._TEXTS,
    fingerprint._RECORDS,
    fingerprint._OPTIONS,
    canonical_text._CACHES,
    canonical_text._OWNED,
    stateful._CUTS,
)
"""The module-level caches, each a dict cleared in place (the modules' own bounds do the same)."""


def release_caches() -> None:
    """Forget every cached description, so nothing of a finished exploration stays alive.

    Results never depend on the caches (an entry is only a quicker way to the same text), so
    this may be called between explorations in any process, a worker's included. The
    ``Pieces`` of ``canonical_text`` hold each exploration's ``StateMemo``: dropping them drops
    the kept state records and settled entries with them.
    """
    for cache in CACHES:
        cache.clear()
    canonical.LIVE.memo = None
    state_key._DIGESTS.clear()
