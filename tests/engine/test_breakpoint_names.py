"""``Engine.run(until=...)``: a breakpoint name that matches nothing is an error, not a full run."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, SaveContractEdit, sample_edits


def _engine() -> dexviz.Engine:
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow])
    engine.client().start_flow(flow, "flow-1", sample_edits(2))
    return engine


def test_run_until_a_misspelt_step_type_suggests_it_and_runs_nothing():
    engine = _engine()
    before = len(engine.history("flow-1"))
    with pytest.raises(ValueError, match=r"'SaveContractEdt' is neither an event kind nor a "
                                         r"Step type .*did you mean 'SaveContractEdit'"):
        engine.run(until="SaveContractEdt")
    assert len(engine.history("flow-1")) == before


def test_run_until_a_misspelt_event_kind_suggests_the_kind():
    with pytest.raises(ValueError, match="did you mean 'FlowClosed'"):
        _engine().run(until="FlowClosd")


def test_run_until_a_known_step_type_or_class_still_stops_there():
    events = _engine().run(until="SaveContractEdit")
    assert events[-1].step_type == "SaveContractEdit"
    assert _engine().run(until=SaveContractEdit)[-1].step_type == "SaveContractEdit"
