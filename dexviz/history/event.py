"""Event: one immutable, JSON-ready history record, with a payload built when first read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from dexviz.history.kinds import EventKind


class Payload(Mapping[str, Any]):
    """An event payload built from commit-time values the first time it is read.

    The engine records several events per Step transition and most are never read while the
    engine runs, so it keeps the values it needs (all immutable once the commit is made) and
    builds the JSON-ready dict on first access. Reading it gives exactly the dict
    :meth:`_make` returns, so saved histories do not depend on when they were read.
    Subclasses keep their values in slots of their own and say how to build the dict;
    :class:`LazyPayload` keeps a builder function and its arguments.
    """

    __slots__ = ("_value",)

    _value: dict[str, Any] | None

    @property
    def value(self) -> dict[str, Any]:
        """The JSON-ready dict (built now if it has not been yet)."""
        value = self._value
        if value is None:
            value = self._value = self._make()
        return value

    def _make(self) -> dict[str, Any]:
        """Build the dict once (each kind of payload says how)."""
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.value[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __contains__(self, key: object) -> bool:
        return key in self.value

    def get(self, key: str, default: Any = None) -> Any:
        """The member ``key``, or ``default``."""
        return self.value.get(key, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Payload):
            other = other.value
        return self.value == other

    # Unhashable, like the dict it stands for.
    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the dict it stands for: the bytes of a pickled history (and so snapshot
        # equality) do not depend on which payloads happened to be read before.
        return (dict, (self.value,))

    def __repr__(self) -> str:
        return repr(self.value)


class LazyPayload(Payload):
    """A :class:`Payload` built by calling ``build(*args)`` on first read."""

    __slots__ = ("_build", "_args")

    def __init__(self, build: Callable[..., dict[str, Any]], *args: Any) -> None:
        self._build: Callable[..., dict[str, Any]] | None = build
        self._args: tuple[Any, ...] = args
        self._value = None

    def _make(self) -> dict[str, Any]:
        assert self._build is not None
        value = self._build(*self._args)
        self._build = None
        self._args = ()
        return value


class Event(NamedTuple):
    """One history event.

    A NamedTuple rather than a frozen dataclass: the engine builds several per Step transition,
    and tuple construction is several times cheaper while staying immutable.

    Attributes:
        seq: 1-based position in the Flow's history.
        time_ns: engine time in nanoseconds since the Unix epoch (virtual in simulation).
        kind: an EventKind (or the raw name of a kind this version does not know).
        flow_id: the Flow id.
        run_id: the run the event belongs to.
        execution_id: the Step execution (``Type-N``), if any.
        step_type: the Step type, if any.
        method: ``wait_for``, ``execute``, ``rpc`` or ``timeout_handler``, if any.
        attempt: the method attempt, if any.
        payload: JSON-ready details (see docs/history-format.md); a read-only mapping, which
            the engine builds on first access (:class:`LazyPayload`).
    """

    seq: int
    time_ns: int
    kind: EventKind | str
    flow_id: str
    run_id: str
    execution_id: str | None
    step_type: str | None
    method: str | None
    attempt: int | None
    payload: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Return the event as a JSON-ready dict (keys in field order)."""
        return {
            "seq": self.seq,
            "time_ns": self.time_ns,
            "kind": str(self.kind),
            "flow_id": self.flow_id,
            "run_id": self.run_id,
            "execution_id": self.execution_id,
            "step_type": self.step_type,
            "method": self.method,
            "attempt": self.attempt,
            "payload": dict(self.payload),
        }

    @property
    def time_s(self) -> float:
        """Engine time in seconds since the epoch."""
        return self.time_ns / 1e9

    def describe(self) -> str:
        """One line for listings: ``#12 StepExecuteCompleted EditContract-3 (execute #1)``."""
        parts = [f"#{self.seq}", str(self.kind)]
        if self.execution_id:
            parts.append(self.execution_id)
        if self.method:
            parts.append(f"({self.method} #{self.attempt})" if self.attempt else f"({self.method})")
        return " ".join(parts)
