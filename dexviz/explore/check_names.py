"""The names a check or a fault budget refers to, validated against the Flows explored.

A check naming a Channel no Flow declares (``exclusive("ovn")`` for ``oven``) watches nothing
and would be "proven" on any Flow; a fault budget naming an unknown Step never fires. Both are
errors raised before any schedule runs, with the "did you mean" hint the other commands give.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dexviz.analysis.names import check_name
from dexviz.engine.core.choice import FaultBudget
from dexviz.sdk.registry import Registry

__all__ = ["KnownNames", "UnknownNameError", "validate_names"]


class UnknownNameError(ValueError):
    """A check or fault budget names a Channel, Attribute or Step type no Flow declares."""


@dataclass(frozen=True)
class KnownNames:
    """The Channels, Attributes and Step types the explored Flows declare."""

    owner: str
    channels: frozenset[str]
    attributes: frozenset[str]
    step_types: frozenset[str]

    @classmethod
    def of(cls, registry: Registry) -> KnownNames:
        """Every name the registry's Flows declare; ``owner`` names the Flows for messages."""
        definitions = registry.definitions
        flows = ", ".join(repr(d.flow_type) for d in definitions)
        owner = f"Flow {flows}" if len(definitions) == 1 else f"the Flows {flows}"
        return cls(
            owner,
            frozenset(n for d in definitions for n in d.channels),
            frozenset(n for d in definitions for n in d.attributes),
            frozenset(n for d in definitions for n in d.steps),
        )

    def channel(self, name: str) -> None:
        """Raise ValueError unless a Flow declares Channel ``name`` (or a ChannelMap's queue)."""
        base = name.split("/", 1)[0]
        check_name(base if base in self.channels else name, self.channels, "Channel", self.owner)

    def attribute(self, name: str) -> None:
        """Raise ValueError unless a Flow declares Attribute ``name``."""
        check_name(name, self.attributes, "Attribute", self.owner)

    def step_type(self, name: str) -> None:
        """Raise ValueError unless a Flow has a Step of type ``name``."""
        check_name(name, self.step_types, "Step type", self.owner)


def validate_names(
    checks: Iterable[object], faults: FaultBudget | None, registry: Registry
) -> None:
    """Raise UnknownNameError naming the first unknown name a check or the fault budget refers to.

    A check takes part by defining ``validate(known: KnownNames)``; plain callables cannot say
    what they read and are not validated.
    """
    known = KnownNames.of(registry)
    for check in checks:
        validate = getattr(check, "validate", None)
        if callable(validate):
            try:
                validate(known)
            except ValueError as error:
                name = getattr(check, "name", check)
                raise UnknownNameError(f"check {name}: {error}") from None
    if faults is not None:
        for step_type in faults.step_types:
            try:
                known.step_type(step_type)
            except ValueError as error:
                raise UnknownNameError(f"fault budget {faults}: {error}") from None
