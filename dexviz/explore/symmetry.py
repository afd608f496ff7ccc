"""Declared symmetry (``explore(..., symmetric=[group, ...])``), as TLC's SYMMETRY.

A group is a list of input values that the Flow treats alike (reviewers whose edits differ
only in name). Permuting a group's values wherever they appear — inputs, messages, Attributes,
outputs, monitor states — maps a state to an equivalent one, so the stateful search keeps one
state of each such class: the fingerprint describes the state with each value replaced by a
placeholder chosen by the value's role in the state, not by its name.

A value appears in the state's description through its *names*: the repr of a string value, or,
for values of one class (frozen dataclasses), the reprs of the string fields in which the
group's values differ (``reviewer='r1'``), so that a record carrying only the reviewer's name is
permuted too. Any choice of placeholders is sound (the description is always that of a
permuted state); choosing them by role makes two permuted states meet the same description.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Symmetry"]

IDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*-\d+")
"""Execution ids (``Type-N``) in a description: masked when a value's role is compared."""


def _fields(value: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return {}


def _names(group: Sequence[Any], where: str) -> tuple[str, ...]:
    """The text naming each value of ``group`` in a state's description."""
    values = list(group)
    if len(values) < 2:
        raise ValueError(f"{where}: a symmetric group needs at least two values, got {values!r}")
    if all(isinstance(v, str) for v in values):
        names = tuple(repr(v) for v in values)
    elif len({type(v) for v in values}) == 1 and _fields(values[0]):
        rows = [_fields(v) for v in values]
        differing = [k for k in rows[0] if len({repr(r[k]) for r in rows}) > 1]
        if not differing or not all(isinstance(rows[0][k], str) for k in differing):
            raise ValueError(
                f"{where}: the values of a symmetric group must differ in string fields only "
                f"(their names), got {values!r}"
            )
        # One name per value: the first differing field names it (the others follow it).
        names = tuple(repr(r[differing[0]]) for r in rows)
    else:
        raise ValueError(
            f"{where}: a symmetric group holds strings or dataclass values of one class, "
            f"got {values!r}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: the values of a symmetric group must be distinct: {values!r}")
    return names


@dataclass(frozen=True)
class Symmetry:
    """The declared groups, each as the names of its values in a state's description."""

    groups: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, groups: Sequence[Sequence[Any]] | None) -> Symmetry | None:
        """The symmetry ``explore(symmetric=...)`` declares, or None for no groups.

        Raises:
            ValueError: a group of fewer than two values, of values that differ in more than
                string fields, or a value named in two groups.
        """
        if not groups:
            return None
        if isinstance(groups, (str, bytes)) or not all(
            isinstance(g, (list, tuple)) for g in groups
        ):
            raise ValueError(f"symmetric= takes a list of groups (lists of values), got {groups!r}")
        named = tuple(_names(g, f"symmetric group {i + 1}") for i, g in enumerate(groups))
        every = [n for g in named for n in g]
        if len(set(every)) != len(every):
            raise ValueError("symmetric=: a value is named in two groups")
        return cls(named)

    @property
    def size(self) -> int:
        """How many values the groups hold."""
        return sum(len(g) for g in self.groups)

    def canonical(self, texts: Sequence[str]) -> dict[str, str]:
        """A renaming of every group value, chosen from ``texts`` (the state's description).

        Each value is ranked within its group by its role: the sorted texts that mention it,
        with it masked as "self", the group's other values as "other" and execution ids
        masked; the value of rank ``k`` is renamed to the group's ``k``-th placeholder.
        """
        mapping: dict[str, str] = {}
        # Execution ids masked once: a value's role must not depend on numbering.
        masked = IDS.sub("#", "\x00".join(texts)).split("\x00")
        for g, names in enumerate(self.groups):
            roles = [(self._role(masked, name, names), i) for i, name in enumerate(names)]
            for rank, (_, i) in enumerate(sorted(roles)):
                mapping[names[i]] = f"'<{g}.{rank}>'"
        return mapping

    @staticmethod
    def _role(texts: Sequence[str], name: str, names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(Symmetry.mention(t, name, names) for t in texts if name in t))

    @staticmethod
    def mention(text: str, name: str, names: tuple[str, ...]) -> str:
        """``text`` (with ids masked) as a mention of ``name``: it "self", the group "other"."""
        masked = text.replace(name, "\x02self")
        for other in names:
            if other in masked:
                masked = masked.replace(other, "\x02other")
        return masked
