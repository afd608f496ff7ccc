"""simulate(): run one Flow to quiescence in a fresh simulation engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dexviz.engine.engine import Engine
from dexviz.engine.faults import CancelExecution, FailAttempt, FaultPlan
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
        return (
            f"SimulationRun(flow_id={self.flow_id!r}, status={self.result.status.name}, "
            f"events={len(self.history)})"
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
