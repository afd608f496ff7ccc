"""Rewriting a state's description piece by piece, each rewrite made once and cached.

A canonical fingerprint (``explore.canonical``) is the description of a state — one text per
execution, waiter, ready unit, timer, lock, plus the run's own fields — with the declared
symmetry's values renamed by role and the execution ids (``Type-N``) renamed by lineage.
Neighbouring states share almost every piece (a step changes one or two executions), and the
same piece meets the same renaming again and again, so each piece's facts (does it name an
object by address, which symmetric values it holds, which ids, its text with ids masked) and
each of its rewrites are kept by their text.

Ids are renamed as whole tokens (``IDS``): a longer name that merely contains an id
(``MyStep-12`` around ``Step-1``) is left as it is, so renaming never cuts into it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dexviz.explore.canonical_memo import StateMemo
from dexviz.explore.symmetry import IDS, Symmetry

__all__ = ["Naming", "Pieces", "pieces_for", "pieces_of"]

LIMIT = 100_000
"""Entries one cache keeps before it starts over (bounds memory on long explorations)."""

ADDRESS = " at 0x"
"""In a default repr: the object is named, not described, so the state has no fingerprint."""


_SPLIT = re.compile(f"({IDS.pattern})")
"""``IDS`` as a group: ``split`` gives the text between ids and the ids, alternating."""


def _bounded(cache: dict[Any, Any]) -> dict[Any, Any]:
    if len(cache) >= LIMIT:
        cache.clear()
    return cache


class _Piece:
    """What is known of one piece of a description (after the start input's marker)."""

    __slots__ = ("text", "opaque", "split", "tokens", "values", "masked", "roles", "pairs", "sum")

    def __init__(self, text: str, symmetry: Symmetry | None) -> None:
        self.text = text
        self.opaque = ADDRESS in text
        split = _SPLIT.split(text)
        self.split = split if len(split) > 1 else None
        """The text between ids and the ids (``IDS``), alternating; None without ids."""
        self.tokens = tuple(dict.fromkeys(split[1::2]))
        """The execution ids (and id-like names) in the text, once each."""
        names = () if symmetry is None else tuple(n for g in symmetry.groups for n in g)
        self.values = tuple(n for n in names if n in text)
        """The symmetric values (their names) the text holds."""
        self.masked = IDS.sub("#", text) if names else ""
        """The text with execution ids masked: a value's role must not depend on numbering."""
        self.roles = tuple(n for n in names if n in self.masked)
        """The symmetric values the masked text holds (those whose role it tells)."""
        self.sum = _sum(text)
        """The text's digest: a state's key is composed of its pieces' digests."""
        self.pairs: tuple[tuple[str, str], ...] | None = None
        """Each value the masked text holds, with the text as a mention of it (``roles``)."""


def _sum(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class Naming:
    """Each execution's canonical name under one lineage and renaming, and rewrites under it.

    ``sums`` keeps, by piece, the digest of the piece rewritten under this naming: neighbouring
    states share their lineage and most of their pieces.
    """

    __slots__ = ("names", "sums")

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.sums: dict[_Piece, bytes] = {}


class Pieces:
    """The caches of one exploration's descriptions: one start input, one symmetry."""

    def __init__(self, start_input: Any, symmetry: Symmetry | None) -> None:
        self.given = repr(start_input)
        self.symmetry = symmetry
        self._pieces: dict[str, _Piece] = {}
        self._moved: dict[tuple[str, tuple[str, ...]], str] = {}
        self._tokens: dict[str, tuple[str, ...]] = {}
        self._renamed: dict[tuple[str, tuple[str | None, ...]], str] = {}
        self._bases: dict[str, str] = {}
        self._namings: dict[tuple[Any, ...], Naming] = {}
        self._kept = 0
        """Digests the namings keep, together (bounds their memory)."""
        self.memo = StateMemo()
        """The kept descriptions of states, for their successors (``canonical_memo``)."""

    def of(self, texts: Iterable[str]) -> list[_Piece] | None:
        """Each text as a piece (the start input marked); None if one names an address."""
        found, make = self._pieces, self.piece
        pieces = []
        for text in texts:
            piece = found.get(text) or make(text)
            if piece.opaque:
                return None
            pieces.append(piece)
        return pieces

    def piece(self, text: str) -> _Piece:
        """``text`` as a piece (the start input marked), whatever it names."""
        piece = self._pieces.get(text)
        if piece is None:
            marked = text.replace(self.given, "<input>")
            piece = _bounded(self._pieces)[text] = _Piece(marked, self.symmetry)
        return piece

    def roles(self, pieces: Sequence[_Piece]) -> dict[str, str]:
        """The symmetry's renaming, chosen from the pieces (``Symmetry.canonical``'s rule)."""
        symmetry = self.symmetry
        assert symmetry is not None
        mentions: dict[str, list[str]] = {name: [] for names in symmetry.groups for name in names}
        for piece in pieces:
            pairs = piece.pairs
            if pairs is None:
                pairs = self._pairs(piece, symmetry)
            for name, mention in pairs:
                mentions[name].append(mention)
        mapping: dict[str, str] = {}
        for g, names in enumerate(symmetry.groups):
            roles = sorted((tuple(sorted(mentions[name])), i) for i, name in enumerate(names))
            for rank, (_, i) in enumerate(roles):
                mapping[names[i]] = f"'<{g}.{rank}>'"
        return mapping

    @staticmethod
    def _pairs(piece: _Piece, symmetry: Symmetry) -> tuple[tuple[str, str], ...]:
        """The piece's mentions of the values it holds, each as seen from that value's group."""
        pairs = tuple(
            (name, Symmetry.mention(piece.masked, name, names))
            for names in symmetry.groups
            for name in piece.roles
            if name in names
        )
        piece.pairs = pairs
        return pairs

    def moved(self, piece: _Piece, rename: dict[str, str]) -> str:
        """The piece's text with its symmetric values renamed by ``rename``."""
        if not piece.values or not rename:
            return piece.text
        key = (piece.text, tuple(rename[n] for n in piece.values))
        text = self._moved.get(key)
        if text is None:
            text = piece.text
            for name in sorted(piece.values, key=len, reverse=True):
                text = text.replace(name, rename[name])
            _bounded(self._moved)[key] = text
        return text

    def rewritten(self, piece: _Piece, rename: dict[str, str], names: dict[str, str]) -> str:
        """The piece with its symmetric values renamed by ``rename``, then its ids by ``names``."""
        if piece.values and rename:
            return self.renamed(self.moved(piece, rename), names)
        split = piece.split
        if split is None:
            return piece.text
        return _joined(split, names)

    def renamed(self, text: str, names: dict[str, str]) -> str:
        """``text`` with every execution id token renamed by ``names`` (others kept)."""
        tokens = self._tokens.get(text)
        if tokens is None:
            tokens = _bounded(self._tokens)[text] = tuple(dict.fromkeys(IDS.findall(text)))
        if not tokens:
            return text
        return self._renamed_tokens(text, tokens, names)

    def _renamed_tokens(self, text: str, tokens: tuple[str, ...], names: dict[str, str]) -> str:
        get = names.get
        key = (text, tuple([get(t) for t in tokens]))
        found = self._renamed.get(key)
        if found is None:
            found = IDS.sub(lambda m: names.get(m.group(), m.group()), text)
            _bounded(self._renamed)[key] = found
        return found

    def naming(self, key: tuple[Any, ...], make: Callable[[], dict[str, str]]) -> Naming:
        """The execution names ``make`` gives for ``key`` (a lineage and a renaming), made once."""
        found = self._namings.get(key)
        if found is None:
            if self._kept >= LIMIT:
                self._namings.clear()
                self._kept = 0
            found = self._namings[key] = Naming(make())
        return found

    def sums(self, pieces: Sequence[_Piece], rename: dict[str, str], naming: Naming) -> list[bytes]:
        """The digest of each piece rewritten by ``rename`` and ``naming``, kept by the naming.

        ``naming`` stands for its key, a lineage and ``rename``, which decide every rewrite;
        its digests are kept by the piece (the same object while its text is cached).
        """
        kept = naming.sums
        done = list(map(kept.get, pieces))
        if None in done:
            for at, piece in enumerate(pieces):
                if done[at] is None:
                    if not piece.tokens and not (piece.values and rename):
                        found = piece.sum
                    else:
                        found = _sum(self.rewritten(piece, rename, naming.names))
                    done[at] = kept[piece] = found
                    self._kept += 1
        return done  # type: ignore[return-value]

    def base(self, key: str) -> str:
        """A lineage key's short hash (the part of a canonical name that is not a count)."""
        found = self._bases.get(key)
        if found is None:
            found = hashlib.blake2b(key.encode(), digest_size=5).hexdigest()
            _bounded(self._bases)[key] = found
        return found


def _joined(split: list[str], names: dict[str, str]) -> str:
    """A piece's ``split`` joined again, each id renamed by ``names`` (others kept).

    What ``IDS.sub`` renaming each match gives: the same matches, in order.
    """
    get = names.get
    parts = split[:]
    for at in range(1, len(parts), 2):
        token = parts[at]
        parts[at] = get(token, token)
    return "".join(parts)


_CACHES: dict[tuple[str, Symmetry | None], Pieces] = {}


def pieces_for(start_input: Any, symmetry: Symmetry | None) -> Pieces:
    """The caches for explorations of this start input and symmetry (kept for the process)."""
    key = (repr(start_input), symmetry)
    found = _CACHES.get(key)
    if found is None:
        if len(_CACHES) >= 8:
            _CACHES.clear()
        found = _CACHES[key] = Pieces(start_input, symmetry)
    return found


_OWNED: dict[int, tuple[Any, Pieces]] = {}


def pieces_of(setup: Any) -> Pieces:
    """``pieces_for`` an exploration's setup (its ``input`` and ``symmetry``), found once.

    Kept by the setup's identity: a fingerprint then need not read the start input's repr.
    """
    found = _OWNED.get(id(setup))
    if found is None or found[0] is not setup:
        if len(_OWNED) >= 1_000:
            _OWNED.clear()
        # The setup is kept with its caches, so its id is not reused while the entry lives.
        found = _OWNED[id(setup)] = (setup, pieces_for(setup.input, setup.symmetry))
    return found[1]
