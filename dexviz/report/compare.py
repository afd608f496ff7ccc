"""Compare mode of the HTML replay: a second run stepped with the first, as in the Debugger.

``Debugger(a, compare=b)`` steps run b's replay to the event aligned with run a's cursor
(:class:`~dexviz.replay.paired.Paired`) and shows both states side by side. The page does the
same offline: for every event of run a it stores the compare block at that event (the
difference of the execution there, the differing executions, both runs' heading and panels at
the aligned events), and its script swaps the block in as it steps. The block's stylesheet is
written once in the page's head, not in every stored block.
"""

from __future__ import annotations

from collections.abc import Iterator

from dexviz.analysis.run_diff import compare_runs
from dexviz.engine import SimulationRun
from dexviz.history import History
from dexviz.replay.paired import COMPARE_CSS, Paired, compare_html
from dexviz.replay.session import Replay
from dexviz.report.text import safe_history
from dexviz.viz.diff_view import RunDiff

__all__ = ["CompareSource", "compare_blocks", "paired_with"]

CompareSource = History | SimulationRun
"""What the page can compare its run with: a History or a simulated run."""

_INLINE_CSS = f"<style>{COMPARE_CSS}</style>"


def paired_with(debugger: Replay, other: object, collapse_at: int | str | None) -> Paired:
    """Run ``other``'s replay paired with ``debugger``'s run (run a), aligned by lineage.

    Raises:
        TypeError: ``other`` is neither a History nor a SimulationRun.
        ValueError: ``other`` is empty.
    """
    if isinstance(other, Paired):
        history = other.other.history
    elif isinstance(other, SimulationRun):
        history = other.history
    elif isinstance(other, History):
        history = other
    else:
        raise TypeError(f"compare= takes a History or a SimulationRun, got {type(other).__name__}")
    if not len(history):
        raise ValueError("compare=: the run to compare holds no event")
    replay_b = Replay(safe_history(history), collapse_at=collapse_at)
    diff = RunDiff(compare_runs(debugger.history, replay_b.history))
    return Paired.of(diff, replay_b, len(debugger.history))


def compare_blocks(debugger: Replay, paired: Paired) -> Iterator[str]:
    """The compare block at each event of run a, first to last (run b follows each)."""
    for index in range(len(debugger)):
        debugger.seek(index)
        paired.follow(debugger.event)
        yield compare_html(debugger, paired).replace(_INLINE_CSS, "", 1)


def compare_title(paired: Paired) -> str:
    """The line under the page's title: which run is compared, and how many differences."""
    other = paired.other.history
    count = len(paired.diff)
    verdict = f"{count} difference{'s' if count != 1 else ''}" if count else "no difference"
    return f"compared with Flow id {other.flow_id} (run b, {len(other)} events): {verdict}"
