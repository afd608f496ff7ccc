"""What a Dex history does not say: the losses a loaded Dex History states instead of guessing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Loss", "Losses"]


@dataclass(frozen=True)
class Loss:
    """One kind of information the Dex events do not carry.

    Attributes:
        topic: What is missing: ``"attempts"``, ``"message ids"``, ``"messages"``,
            ``"inputs"``, ``"lineage"``, ``"cancellations"``, ``"time"``, ``"values"``,
            ``"spec"``, ``"unknown events"`` or ``"incomplete"``.
        details: One line per case, in the order they were found.
    """

    topic: str
    details: tuple[str, ...]

    def __str__(self) -> str:
        shown = "; ".join(self.details[:3])
        more = f" (and {len(self.details) - 3} more)" if len(self.details) > 3 else ""
        return f"{self.topic}: {shown}{more}"


class Losses:
    """Collects losses while a Dex history is read (each detail once, in order)."""

    def __init__(self) -> None:
        self._details: dict[str, dict[str, None]] = {}
        self.unknown_types: Counter[str] = Counter()

    def add(self, topic: str, detail: str) -> None:
        """Record that ``detail`` (about ``topic``) is not in the history."""
        self._details.setdefault(topic, {})[detail] = None

    def unknown(self, type_name: str) -> None:
        """Count an event of a type dexviz does not know (kept as kind ``unknown``)."""
        self.unknown_types[type_name] += 1

    def unknown_summary(self) -> str | None:
        """One line naming the unknown event types and their counts, or None."""
        if not self.unknown_types:
            return None
        listed = ", ".join(f"{name} ({count})" for name, count in sorted(
            self.unknown_types.items()))
        total = sum(self.unknown_types.values())
        return (f"{total} event{'s' if total != 1 else ''} of types dexviz does not know "
                f"{'were' if total != 1 else 'was'} kept with kind 'unknown': {listed}")

    def freeze(self) -> tuple[Loss, ...]:
        """The losses found, by topic in the order first found."""
        found = [Loss(topic, tuple(details)) for topic, details in self._details.items()]
        summary = self.unknown_summary()
        if summary:
            found.append(Loss("unknown events", (summary,)))
        return tuple(found)
