"""Actions: client calls the explorer may interleave at any point of a schedule.

Each action runs at most ``count`` times (once by default); at every choice point the explorer
may run one of the actions left instead of a ready unit, so an exploration covers every place a
client call can land between the Flow's commits. When nothing is ready and a timer is pending,
the explorer also chooses between a call now and letting virtual time move on to that timer.
A call the engine rejects (the Flow closed first, say) is part of the schedule too: it commits
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dexviz.engine.client import Client
from dexviz.engine.engine import Engine
from dexviz.history.event import Event

Call = Callable[[Client, str], object]


@dataclass(frozen=True)
class Action:
    """One client call, named for traces, allowed ``count`` times per schedule."""

    name: str
    call: Call
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"action {self.name!r}: count must be >= 1, got {self.count}")

    def run(self, client: Client, flow_id: str) -> str | None:
        """Make the call; return the engine's refusal as text, or None."""
        try:
            self.call(client, flow_id)
        except Exception as error:  # noqa: BLE001 - a refused call is a legal outcome
            return f"{type(error).__name__}: {error}"
        return None

    def run_recorded(self, engine: Engine, flow_id: str) -> tuple[tuple[Event, ...], str]:
        """Make the call on ``engine``; return the events it committed and its trace label."""
        produced: list[Event] = []
        recorder = engine.runtime.recorder
        outer, recorder.produced = recorder.produced, produced
        try:
            refusal = self.run(engine.client(), flow_id)
        finally:
            recorder.produced = outer
        return tuple(produced), self.name + (f" (refused: {refusal})" if refusal else "")

    def __repr__(self) -> str:
        times = "" if self.count == 1 else f" x{self.count}"
        return f"Action({self.name}{times})"

    @classmethod
    def publish(cls, channel: Any, *values: Any, count: int = 1) -> Action:
        """``client.publish(flow_id, channel, *values)``."""
        name = f"publish {_name(channel)} {', '.join(map(repr, values))}".rstrip()
        return cls(name, lambda c, f: c.publish(f, channel, *values), count)

    @classmethod
    def invoke_rpc(cls, rpc: Any, input: Any = None, *, count: int = 1) -> Action:
        """``client.invoke_rpc(rpc, flow_id, input)``."""
        return cls(f"invoke_rpc {_name(rpc)}", lambda c, f: c.invoke_rpc(rpc, f, input), count)

    @classmethod
    def set_attribute(cls, attribute: Any, *args: Any, count: int = 1) -> Action:
        """``client.set_attribute(flow_id, attribute, *args)`` (args end with the value)."""
        name = f"set_attribute {_name(attribute)} = {', '.join(map(repr, args))}"
        return cls(name, lambda c, f: c.set_attribute(f, attribute, *args), count)

    @classmethod
    def stop_flow(cls, options: Any = None) -> Action:
        """``client.stop_flow(flow_id, options)``."""
        return cls("stop_flow", lambda c, f: c.stop_flow(f, options))

    @classmethod
    def skip_timer(cls, execution_id: str, timer_id: Any, *, count: int = 1) -> Action:
        """``client.skip_timer(flow_id, execution_id, timer_id)``."""
        name = f"skip_timer {execution_id}"
        return cls(name, lambda c, f: c.skip_timer(f, execution_id, timer_id), count)


def _name(thing: Any) -> str:
    for attribute in ("name", "__name__"):
        value = getattr(thing, attribute, None)
        if isinstance(value, str):
            return value
    return repr(thing)
