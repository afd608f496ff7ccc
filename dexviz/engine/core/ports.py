"""Ports: the few calls a lower layer of the engine makes into a higher one, as interfaces.

A collaborator imports only what lies below it (see ARCHITECTURE.md, "Read the engine in this
order"). Where it must reach up — a closed run may be retried or wake its SubFlow parents, a
Wait may start children, a Flow start commits at once, a lost heartbeat fails its attempt —
it holds one of these narrow interfaces, which the runtime installs once when it wires the
engine. Each names exactly what its user needs, nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dexviz.engine.core.context import InvocationContext
    from dexviz.engine.core.state import Execution, FlowRun
    from dexviz.sdk.codec import CodecRegistry
    from dexviz.sdk.condition import SubFlowCondition
    from dexviz.sdk.results import FlowResult


class RunEnds(Protocol):
    """What closing a run asks of the layers above (the runtime)."""

    def cancel_flow_timers(self, run: FlowRun) -> None:
        """Stop the Flow-timeout timer of a closing run (R139)."""

    def flow_closed(self, run: FlowRun) -> None:
        """A run recorded FlowClosed: retry it under its policy, or tell waiting parents."""


class Committer(Protocol):
    """The runtime's commit, for the flows that commit a start or a switch at once."""

    def commit(self) -> None:
        """Commit buffered events and run the after-commit checks."""


class ChildFlows(Protocol):
    """What a waiting execution needs of its SubFlow children (R131-R135)."""

    def start_children(self, run: FlowRun, ex: Execution) -> None:
        """Start (or attach to) the child of every SubFlow condition of ``ex``'s Wait."""

    def is_done(self, ex: Execution, condition: SubFlowCondition) -> bool:
        """Whether the condition's child has reached any terminal status."""


class ChildResults(Protocol):
    """What an Execute's context reads of its SubFlow children (R133)."""

    def result(self, ex: Execution, index: int) -> FlowResult:
        """The child's FlowResult."""

    def flow_id(self, ex: Execution, index: int) -> str:
        """The generated child Flow id of SubFlow condition ``index``."""


class ContextHost(Protocol):
    """What a Step attempt's :class:`~dexviz.engine.core.context.InvocationContext` uses."""

    codecs: CodecRegistry
    subflows: ChildResults

    def now(self) -> int:
        """Engine time in ns (a heartbeat's time)."""

    def write_stream(self, flow_id: str, stream: Any, source: str, value: Any) -> Any:
        """Append to a Stream now, outside any commit, and wake readers (R180)."""


class AttemptFailer(Protocol):
    """How a lost heartbeat ends its attempt: as a failed attempt (R107)."""

    def fail(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, error: BaseException, reason: str
    ) -> None:
        """Record a failed attempt; retry it, or take the method's failure exit."""
