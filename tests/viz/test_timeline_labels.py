"""The timeline explains itself: named holders, legend entries, a sane axis, plurals."""

from __future__ import annotations

import textwrap

import pytest

import dexviz
from dexviz.viz.timeline import timeline, timeline_svg
from tests.analysis.factory import TOKEN
from tests.analysis.runs import contract_edit_run

pytest.importorskip("matplotlib")

FLOWS = textwrap.dedent("""
    from datetime import timedelta
    from dexviz import Context, Flow, Step, StepList, Timer, Wait, dead_end

    class Sleep(Step[int]):
        def wait_for(self, context: Context, n: int):
            return Wait.until(Timer.by_duration(timedelta(seconds=5)))

        def execute(self, context: Context, n: int):
            return dead_end()

    class Instant(Step[int]):
        def execute(self, context: Context, n: int):
            return dead_end()

    class TimerFlow(Flow[int]):
        def get_steps(self):
            return StepList.start_step(Sleep())

    class InstantFlow(Flow[int]):
        def get_steps(self):
            return StepList.start_step(Instant())
    """)


@pytest.fixture(scope="module")
def flows():
    namespace: dict[str, object] = {"__name__": "timeline_label_flows"}
    exec(compile(FLOWS, "timeline_label_flows.py", "exec"), namespace)  # noqa: S102
    return namespace


def _texts(figure) -> list[str]:
    return [t.get_text() for t in figure.axes[0].texts]


def _legend(figure) -> list[str]:
    return [t.get_text() for t in figure.legends[0].get_texts()]


def test_token_bars_name_the_holder_not_only_its_number():
    # 14 inches wide, a 1 s bar is ~28 pt: room for "ECE-2" in 7.5 pt captions, not the whole id.
    figure = timeline(contract_edit_run(0, 8), channel=TOKEN, group_by="branch", width=14)
    texts = _texts(figure)
    assert "EnterContractEdit-7" in texts and "EnterContractEdit-4" in texts
    assert "ECE-2" in texts  # a 1 s bar is too short for the whole id: the capitals and number
    assert not any(t.isdigit() for t in texts)


def test_a_zero_length_holding_and_instant_attempts_have_legend_entries():
    legend = _legend(timeline(contract_edit_run(0, 8), channel=TOKEN, group_by="branch"))
    assert "held for no time (handed on at once)" in legend
    assert "took no time" in legend
    assert f"holds {TOKEN} (bar: holder)" in legend


def test_timer_firings_are_marked_and_in_the_legend(flows):
    figure = timeline(dexviz.simulate(flows["TimerFlow"](), 1).history)
    timers = [c for c in figure.axes[0].collections if (c.get_gid() or "") == "timer:Sleep-1"]
    assert len(timers) == 1 and timers[0].get_offsets()[0][0] == pytest.approx(5.0)
    assert "timer fired" in _legend(figure)


def test_a_run_entirely_at_t0_gets_a_plain_axis(flows):
    figure = timeline(dexviz.simulate(flows["InstantFlow"](), 1).history)
    ax = figure.axes[0]
    assert ax.get_xlim()[1] == pytest.approx(1.02)
    timeline_svg(figure)  # lays the figure out, as a notebook or a file would
    assert ax.xaxis.get_offset_text().get_text() == ""
    assert "· 1 execution ·" in ax.get_title(loc="left")
