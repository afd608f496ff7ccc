"""Execution records: one frozen record per Step execution of a run, folded from its history.

Every execution view (tables, timeline, lineage graph, exclusive-section and concurrency checks)
starts here, so a history loaded from a file gives the same records as a live one.
"""

from __future__ import annotations

from dexviz.analysis._execution_fold import fold_run
from dexviz.analysis.execution_records import (
    Attempt,
    AttemptOutcome,
    Execution,
    ExecutionStatus,
    FlowClose,
    MessageRef,
    RunExecutions,
)
from dexviz.history import Event, EventKind, History

__all__ = [
    "Attempt",
    "AttemptOutcome",
    "Execution",
    "ExecutionStatus",
    "FlowClose",
    "MessageRef",
    "RunExecutions",
    "RunSource",
    "as_run",
    "build_executions",
    "select_run",
]


def select_run(history: History, run_id: str | None = None) -> tuple[str, tuple[Event, ...]]:
    """Pick one run's events: ``run_id``, or the history's last run (as Dex Web shows one run).

    A run that continued as new from earlier runs is shown with them, as one run (R13).

    Raises:
        ValueError: the history is empty, or has no run ``run_id`` (the message lists the runs).
    """
    runs = history.run_ids
    if not runs:
        raise ValueError("the history is empty: there is no run to show")
    chosen = runs[-1] if run_id is None else run_id
    if chosen not in runs:
        raise ValueError(
            f"Flow {history.flow_id!r} has no run {chosen!r} (runs: {', '.join(runs)})"
        )
    chain = _continued_chain(history, chosen)
    events = tuple(e for e in history if e.run_id in chain)
    if len(chain) == 1:
        return chosen, events
    # Runs joined by continue-as-new are one Flow run to every view: drop the seams.
    return chosen, tuple(e for e in events if not _is_seam(e))


def _continued_chain(history: History, run_id: str) -> set[str]:
    """``run_id`` and the runs it continued as new from (R13), back to the first."""
    starts = {
        e.run_id: e for e in history if e.kind == EventKind.FLOW_STARTED_OR_CONTINUED
    }
    chain = {run_id}
    start = starts.get(run_id)
    while start is not None and start.payload.get("reason") == "continue_as_new":
        previous = start.payload.get("previous_run_id")
        if not isinstance(previous, str) or previous in chain:
            break
        chain.add(previous)
        start = starts.get(previous)
    return chain


def _is_seam(event: Event) -> bool:
    """The events that only mark where a run continued as new."""
    payload = event.payload
    if event.kind == EventKind.FLOW_CLOSED:
        return payload.get("status") == "CONTINUED_AS_NEW"
    if event.kind in (EventKind.FLOW_STARTED_OR_CONTINUED, EventKind.STEP_EXECUTION_CREATED):
        return payload.get("reason") == "continue_as_new"
    return False


def build_executions(history: History, run_id: str | None = None) -> RunExecutions:
    """Fold one run of ``history`` (default: the last run) into its Step execution records.

    Args:
        history: A Flow's history, live or loaded from a file.
        run_id: The run to read; the last run when None.

    Returns:
        The run's executions in creation order, with its start, end and close.

    Examples:
        >>> from dexviz.history import History
        >>> build_executions(History())
        Traceback (most recent call last):
        ...
        ValueError: the history is empty: there is no run to show
    """
    chosen, events = select_run(history, run_id)
    return fold_run(chosen, events)


RunSource = History | RunExecutions
"""What the execution views accept: a History (its last run is read) or already-built records."""


def as_run(source: RunSource, run_id: str | None = None) -> RunExecutions:
    """Return ``source`` itself when it is a RunExecutions, else ``build_executions(source)``."""
    if isinstance(source, RunExecutions):
        if run_id is not None and run_id != source.run_id:
            raise ValueError(f"these records are of run {source.run_id!r}, not {run_id!r}")
        return source
    return build_executions(source, run_id)
