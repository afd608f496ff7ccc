"""Tables of a run as pandas DataFrames: events, executions, attempts, messages, segments.

``frames(history)`` returns a ``RunFrames`` whose tables are built on first access. Every time
column comes twice: ``<name>`` as tz-aware UTC (``datetime64[ns, UTC]``, NaT when absent) and
``<name>_s`` as float seconds since the Flow's start (NaN when absent). Status-like columns are
categoricals. pandas is imported lazily (``pip install "dexviz[table]"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dexviz._optional import require
from dexviz.analysis.executions import Attempt, Execution, RunExecutions, RunSource, as_run
from dexviz.analysis.intervals import run_segments
from dexviz.analysis.messages import deliveries
from dexviz.history import SEMANTIC_KINDS
from dexviz.history.instance_names import shown_name

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunFrames", "frames"]

_EXECUTION_TIMES = ("created", "wait_for_start", "wait_for_end", "wait_start", "wait_end",
                    "execute_start", "execute_end", "finished")


class RunFrames:
    """The tables of one run; each DataFrame is built on first access and then cached.

    Attributes:
        run: The execution records the tables are built from.
    """

    def __init__(self, run: RunExecutions) -> None:
        self.run = run

    def __repr__(self) -> str:
        return (f"RunFrames(flow_id={self.run.flow_id!r}, run_id={self.run.run_id!r}, "
                f"events={len(self.run.events)}, executions={len(self.run)})")

    def _frame(self, rows: Iterable[Mapping[str, Any]], columns: Sequence[str],
               times: Sequence[str] = (), categories: Sequence[str] = ()) -> pd.DataFrame:
        pandas = require("pandas", "table")
        frame = pandas.DataFrame(list(rows), columns=list(columns))
        for name in times:
            frame[f"{name}_s"] = (frame[name].astype("float64") - self.run.start_ns) / 1e9
            frame[name] = pandas.to_datetime(frame[name].astype("Int64"), unit="ns", utc=True)
        for name in categories:
            frame[name] = frame[name].astype("category")
        order = [c for name in columns for c in (name, f"{name}_s") if c in frame.columns]
        return frame[order + [c for c in frame.columns if c not in order]]

    @cached_property
    def events(self) -> pd.DataFrame:
        """One row per event: seq, time, kind, execution, method, attempt, payload."""
        rows = ({"seq": e.seq, "time": e.time_ns, "kind": str(e.kind), "run_id": e.run_id,
                 "execution_id": e.execution_id, "step_type": e.step_type, "method": e.method,
                 "attempt": e.attempt, "semantic": str(e.kind) in _SEMANTIC,
                 "payload": dict(e.payload)} for e in self.run.events)
        columns = ["seq", "time", "kind", "run_id", "execution_id", "step_type", "method",
                   "attempt", "semantic", "payload"]
        frame = self._frame(rows, columns, ("time",), ("kind", "method"))
        frame["attempt"] = frame["attempt"].astype("Int64")
        return frame

    @cached_property
    def executions(self) -> pd.DataFrame:
        """One row per Step execution: lineage, status, input, phase times, attempts, outcome."""
        rows = (_execution_row(e) for e in self.run.values())
        frame = self._frame(rows, _EXECUTION_COLUMNS, _EXECUTION_TIMES, ("step_type", "status"))
        for name in ("attempts", "wait_for_attempts", "execute_attempts", "failed_attempts"):
            frame[name] = frame[name].astype("int64")
        return frame

    @cached_property
    def attempts(self) -> pd.DataFrame:
        """One row per method attempt, with its error and the retry delay that followed."""
        rows = (_attempt_row(e, a) for e in self.run.values() for a in e.attempts)
        frame = self._frame(rows, _ATTEMPT_COLUMNS, ("start", "end", "retry_at"),
                            ("step_type", "method", "outcome"))
        frame["duration_s"] = frame["end_s"] - frame["start_s"]
        frame["retry_delay_s"] = frame["retry_delay_ns"].astype("float64") / 1e9
        return frame.drop(columns=["retry_delay_ns"])

    @cached_property
    def messages(self) -> pd.DataFrame:
        """One row per delivery: publish -> consume -> returned (or never consumed)."""
        rows = ({"message_id": d.message_id, "channel": shown_name(d.channel), "value": d.value,
                 "publisher": d.publisher, "published": d.published_ns, "consumer": d.consumer,
                 "consumed": d.consumed_ns, "returned": d.returned_ns}
                for d in deliveries(self.run))
        return self._frame(rows, _MESSAGE_COLUMNS,
                           ("published", "consumed", "returned"), ("channel",))

    @cached_property
    def segments(self) -> pd.DataFrame:
        """One row per timeline segment (queued, WaitFor/Execute attempt, wait, backoff)."""
        rows = ({"execution_id": s.execution_id, "step_type": s.step_type, "kind": str(s.kind),
                 "attempt": s.attempt, "outcome": s.outcome, "start": s.start_ns,
                 "end": s.end_ns} for s in run_segments(self.run))
        frame = self._frame(rows, ["execution_id", "step_type", "kind", "attempt", "outcome",
                                   "start", "end"], ("start", "end"), ("step_type", "kind"))
        frame["attempt"] = frame["attempt"].astype("Int64")
        frame["duration_s"] = frame["end_s"] - frame["start_s"]
        return frame

    def tables(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """``(name, DataFrame)`` for every table."""
        for name in ("events", "executions", "attempts", "messages", "segments"):
            yield name, getattr(self, name)


def frames(source: RunSource, *, run_id: str | None = None) -> RunFrames:
    """The tables of one run (default: the history's last run) as lazily built DataFrames.

    Raises:
        MissingExtraError: pandas is not installed (``pip install "dexviz[table]"``), on the
            first table access.
    """
    return RunFrames(as_run(source, run_id))


_SEMANTIC = frozenset(str(kind) for kind in SEMANTIC_KINDS)

_EXECUTION_COLUMNS = [
    "execution_id", "step_type", "parent", "reason", "status", "outcome", "input", *(
        _EXECUTION_TIMES), "attempts", "wait_for_attempts", "execute_attempts",
    "failed_attempts", "next", "consumed", "published", "error_type", "error_message",
    "recovery", "canceled_by",
]
_ATTEMPT_COLUMNS = [
    "execution_id", "step_type", "method", "attempt", "outcome", "start", "end", "error_type",
    "error_message", "reason", "final", "retry_at", "retry_delay_ns",
]
_MESSAGE_COLUMNS = [
    "message_id", "channel", "value", "publisher", "published", "consumer", "consumed",
    "returned",
]


def _execution_row(e: Execution) -> dict[str, Any]:
    return {
        "execution_id": e.execution_id, "step_type": e.step_type, "parent": e.parent,
        "reason": e.reason, "status": str(e.status), "outcome": e.outcome, "input": e.input,
        "created": e.created_ns, "wait_for_start": e.wait_for_start_ns,
        "wait_for_end": e.wait_for_end_ns, "wait_start": e.wait_start_ns,
        "wait_end": e.wait_end_ns, "execute_start": e.execute_start_ns,
        "execute_end": e.execute_end_ns, "finished": e.finished_ns,
        "attempts": len(e.attempts), "wait_for_attempts": len(e.attempts_of("wait_for")),
        "execute_attempts": len(e.attempts_of("execute")), "failed_attempts": e.failed_attempts,
        "next": list(e.next), "consumed": [m.message_id for m in e.consumed],
        "published": [m.message_id for m in e.published], "error_type": e.error_type,
        "error_message": e.error_message, "recovery": e.recovery, "canceled_by": e.canceled_by,
    }


def _attempt_row(e: Execution, a: Attempt) -> dict[str, Any]:
    return {
        "execution_id": e.execution_id, "step_type": e.step_type, "method": a.method,
        "attempt": a.number, "outcome": str(a.outcome), "start": a.start_ns, "end": a.end_ns,
        "error_type": a.error_type, "error_message": a.error_message, "reason": a.reason,
        "final": a.final, "retry_at": a.retry_at_ns, "retry_delay_ns": a.retry_delay_ns,
    }
