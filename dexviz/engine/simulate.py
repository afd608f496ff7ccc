"""simulate(): run one Flow to quiescence in a fresh simulation engine."""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from dexviz.engine.core.faults import CancelExecution, FailAttempt, FaultPlan
from dexviz.engine.engine import Engine
from dexviz.history.history import History
from dexviz.sdk.flow import Flow
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.results import FlowResult


@dataclass(frozen=True)
class SimulationRun:
    """The outcome of ``simulate``: the result, the history, and the engine for further probing."""

    result: FlowResult
    history: History
    engine: Engine
    flow_id: str

    def __repr__(self) -> str:
        """Status and size; a run that did not complete also says why.

        The reason names the failing Step execution, its error type and message, and its
        attempt count (the engine's close message).
        """
        why = self._why()
        return (
            f"SimulationRun(flow_id={self.flow_id!r}, status={self.result.status.name}, "
            f"events={len(self.history)}" + (f", error={why!r})" if why else ")")
        )

    def _repr_html_(self) -> str:
        """A notebook's summary: status, events and, for a failed run, why it failed."""
        import html  # only notebooks ask for HTML

        rows = [("Flow", self.history.flow_spec.get("flow_type", "")), ("Flow id", self.flow_id),
                ("status", self.result.status.name), ("events", len(self.history))]
        why = self._why()
        if why:
            rows.append(("error", why))
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(name))}</th>"
            f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>"
            for name, value in rows
        )
        return f"<table class='dexviz-run'>{cells}</table>"

    def _why(self) -> str | None:
        result = self.result
        if result.status.name in ("COMPLETED", "RUNNING", "CONTINUED_AS_NEW"):
            return None
        return result.failure or result.error_message or (
            result.error_type.name if result.error_type is not None else None
        )

    def to_html(self, path: str | PathLike[str], *, token_channel: str | None = None,
                flow_source: object | None = None) -> Path:
        """Write this run as one self-contained HTML replay file and return its path.

        The page (``dexviz.report``) shows both graphs, the panels at every event, the
        failed attempts and the timeline, with Prev/Next controls and no network access.

        Args:
            path: The ``.html`` file to write.
            token_channel: A token Channel whose holdings the timeline draws in own lanes.
            flow_source: The Flow's source for the definition graph (default: recorded file).

        Raises:
            RuntimeError: no HTML writer is installed (dexviz's package metadata is missing).
        """
        write = _writer("html")
        return Path(write(self, path, token_channel=token_channel, flow_source=flow_source))


WRITERS_GROUP = "dexviz.writers"
"""The entry-point group naming the writers of a run's files (``html``: the replay page)."""


def _writer(name: str) -> Any:
    # The engine layer never imports the views: the package declares its writers as entry
    # points (pyproject.toml), so the views stay above the engine in the layer table.
    from importlib.metadata import entry_points

    for point in entry_points(group=WRITERS_GROUP, name=name):
        return point.load()
    raise RuntimeError(
        f"no {name!r} writer in the entry points {WRITERS_GROUP!r}: dexviz's package metadata "
        "is missing; install dexviz (pip install -e . in a checkout) to write reports"
    )


def simulate(
    flow: Flow[Any],
    input: Any = None,
    *,
    seed: int = 0,
    flow_id: str = "flow-1",
    faults: FaultPlan | list[FailAttempt | CancelExecution] | None = None,
    options: StartFlowOptions | None = None,
    max_units: int | None = None,
) -> SimulationRun:
    """Run ``flow`` with ``input`` until nothing more can happen without outside input.

    The same Flow, input, seed and fault plan give the identical history, byte for byte.
    """
    plan = faults if isinstance(faults, FaultPlan) or faults is None else FaultPlan.of(*faults)
    engine = Engine([flow], seed=seed, faults=plan)
    engine.client().start_flow(flow, flow_id, input, options)
    if max_units is None:
        engine.run_until_idle()
    else:
        engine.run_until_idle(max_units=max_units)
    return SimulationRun(engine.result(flow_id), engine.history(flow_id), engine, flow_id)
