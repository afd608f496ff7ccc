"""The critical path: the chain of executions that decided when the run closed.

Walk back from the execution whose finish the close waited for. At each execution ask what
released it last: if its wait took a message published after its WaitFor committed, the
publisher (a message link); otherwise the execution that created it (a lineage link). The walk
ends at the Flow start, an RPC or a client publish. Shortening any link on this path would close
the run earlier; shortening anything else would not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dexviz.analysis.executions import Execution, RunExecutions, RunSource, as_run
from dexviz.history import Event, EventKind
from dexviz.history._plural import plural
from dexviz.history.fold import text
from dexviz.history.instance_names import shown_name

__all__ = ["CriticalPath", "PathLink", "critical_path"]


@dataclass(frozen=True)
class PathLink:
    """One execution on the critical path and how the previous link released it.

    Attributes:
        execution_id: The execution.
        step_type: Its Step type.
        via: ``"start"`` (created by the Flow start), ``"lineage"`` (created by the previous
            link's decision), ``"message"`` (its wait took a message the previous link
            published), ``"rpc"`` or ``"client"`` (released by an RPC or a client publish).
        channel: For ``"message"``, the Channel of the releasing message.
        start_ns: When the execution was created.
        released_ns: When the previous link released it: its creation, or for ``"message"``
            and ``"client"`` links the moment its wait took the message.
        end_ns: When it finished (or the run's end).
    """

    execution_id: str
    step_type: str
    via: str
    channel: str | None
    start_ns: int
    released_ns: int
    end_ns: int


@dataclass(frozen=True)
class CriticalPath:
    """The critical path of one run, from its start to its close, first link first."""

    start_ns: int
    end_ns: int
    links: tuple[PathLink, ...]
    close_status: str | None

    @property
    def execution_ids(self) -> tuple[str, ...]:
        """The executions on the path, in order."""
        return tuple(link.execution_id for link in self.links)

    @property
    def duration_s(self) -> float:
        """Seconds from the run's start to its end."""
        return (self.end_ns - self.start_ns) / 1e9

    def __repr__(self) -> str:
        return (f"CriticalPath(links={len(self.links)}, duration_s={self.duration_s:.3f}, "
                f"close_status={self.close_status!r})")

    def __str__(self) -> str:
        lines = [f"Critical path: {plural(len(self.links), 'execution')}, {self.duration_s:.3f} s"]
        for link in self.links:
            via = f"{link.via} ({shown_name(link.channel)})" if link.channel else link.via
            released = (link.released_ns - self.start_ns) / 1e9
            end = (link.end_ns - self.start_ns) / 1e9
            lines.append(f"  {link.execution_id:<28} {released:8.3f} -> {end:8.3f} s   via {via}")
        return "\n".join(lines)


def _publications(run: RunExecutions) -> Mapping[str, Event]:
    return {
        str(e.payload.get("message_id")): e
        for e in run.events
        if str(e.kind) == EventKind.MESSAGE_PUBLISHED
    }


def _last_finisher(run: RunExecutions) -> Execution | None:
    limit = run.close.seq if run.close else None
    finished = [
        e for e in run.values()
        if e.finished_seq is not None and e.canceled_ns is None
        and (limit is None or e.finished_seq <= limit)
    ]
    return max(finished, key=lambda e: e.finished_seq or 0, default=None)


def _releaser(execution: Execution, published: Mapping[str, Event]) -> tuple[str, str | None]:
    """Who released ``execution``: the gating message's (publisher, channel), or (parent, None)."""
    wait_start = execution.wait_start_ns
    gating: Event | None = None
    for ref in execution.consumed:
        event = published.get(ref.message_id)
        if event is None or wait_start is None or event.time_ns < wait_start:
            continue
        if gating is None or event.seq > gating.seq:
            gating = event
    if gating is not None:
        return text(gating.payload, "publisher") or "client", text(gating.payload, "channel")
    return execution.parent or "__start__", None


def _walk(run: RunExecutions, last: Execution) -> Iterator[PathLink]:
    published = _publications(run)
    current: Execution | None = last
    seen: set[str] = set()
    while current is not None and current.execution_id not in seen:
        seen.add(current.execution_id)
        source, channel = _releaser(current, published)
        previous = run.get(source)
        if previous is not None:
            via = "message" if channel else "lineage"
        elif source.startswith("__rpc/") or source.startswith("rpc:"):
            via = "rpc"
        elif channel:
            via = "client"
        else:
            via = "start"
        created = current.created_ns if current.created_ns is not None else run.start_ns
        end = current.finished_ns if current.finished_ns is not None else run.end_ns
        released = created
        if channel and current.wait_end_ns is not None:
            released = current.wait_end_ns
        yield PathLink(current.execution_id, current.step_type, via, channel, created, released,
                       end)
        current = previous


def critical_path(source: RunSource, *, run_id: str | None = None) -> CriticalPath:
    """Find the chain of executions from the run's start to its close that set its length.

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        run_id: The run to read when ``source`` is a History.

    Returns:
        The path, first execution first (empty when no execution finished).
    """
    run = as_run(source, run_id)
    last = _last_finisher(run)
    links = tuple(reversed(list(_walk(run, last)))) if last is not None else ()
    return CriticalPath(run.start_ns, run.end_ns, links,
                        run.close.status if run.close else None)
