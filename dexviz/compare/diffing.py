"""``dexviz.diff(a, b)``: compare two runs from wherever they are, with the views attached."""

from __future__ import annotations

from collections.abc import Iterable

from dexviz.analysis.run_diff import DEFAULT_TOLERANCE_S, Aspect, compare_runs
from dexviz.compare.run_sources import RunSource, load_history
from dexviz.viz.diff_view import RunDiff

__all__ = ["diff"]


def diff(
    a: RunSource,
    b: RunSource,
    *,
    run_a: str | None = None,
    run_b: str | None = None,
    tolerance_s: float | None = DEFAULT_TOLERANCE_S,
    aspects: Iterable[Aspect | str] | None = None,
) -> RunDiff:
    """Compare two runs, aligned by Step execution lineage, and return their RunDiff.

    Args:
        a: The first run: a History, a SimulationRun, a history file, a SQLite store path
            holding one Flow, or a ``(store, flow_id)`` pair.
        b: The second run, in any of those forms.
        run_a: Which run of ``a``'s Flow to compare (default: its last).
        run_b: Which run of ``b``'s Flow to compare.
        tolerance_s: Timing differences up to this many seconds are not reported; None leaves
            timing out.
        aspects: Compare only these aspects (``dexviz.analysis.run_diff.Aspect`` values).

    Returns:
        A RunDiff: falsy when the runs do not differ; ``first`` is the first divergence.

    Examples:
        >>> import dexviz
        >>> from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
        >>> run = dexviz.simulate(ContractEditFlow(), sample_edits(3), seed=1)
        >>> bool(dexviz.diff(run, run))
        False
    """
    comparison = compare_runs(
        load_history(a), load_history(b), run_a=run_a, run_b=run_b,
        tolerance_s=tolerance_s, aspects=aspects,
    )
    return RunDiff(comparison)
