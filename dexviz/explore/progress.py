"""Progress while an exploration runs: an ipywidgets bar in Jupyter, tqdm in a terminal.

Neither is required: without them (or with ``progress=False``) nothing is shown.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from dexviz.history._plural import plural


class Progress:
    """Counts schedules; shows them on whatever display is available."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self._bar: Any = None
        self._widget: Any = None
        self.count = 0
        self.text = ""
        self.started = time.perf_counter()
        if enabled:
            self._open(total)

    def _open(self, total: int | None) -> None:
        if _in_jupyter():
            try:
                from dexviz.widgets.progress import ProgressBar

                self._widget = ProgressBar(total)
                return
            except ImportError:
                pass
        if sys.stderr.isatty():
            try:
                from tqdm import tqdm

                self._bar = tqdm(total=total, unit="schedule", desc="exploring", leave=False)
            except ImportError:
                pass

    def update(
        self, schedules: int, states: int, violations: int, pruned: int | None = None
    ) -> None:
        """Show the latest counts; ``pruned``: states pruned (schedules cut at a known state)."""
        text = (f"{plural(schedules, 'schedule')}, {plural(states, 'state')}, "
                f"{plural(violations, 'violation')}")  # fmt: skip
        if pruned is not None:
            text += f", {plural(pruned, 'state')} pruned"
        self._show(schedules, text, plural(states, "state"))

    def update_states(
        self, states: int, transitions: int, pruned: int, frontier: int, violations: int
    ) -> None:
        """Show a stateful search's counts: states, their rate, the frontier, states pruned."""
        elapsed = time.perf_counter() - self.started
        rate = states / elapsed if elapsed > 0 else 0.0
        text = (f"{plural(states, 'state')} ({rate:,.0f}/s), {plural(transitions, 'transition')}, "
                f"frontier {frontier:,}, {plural(pruned, 'state')} pruned, "
                f"{plural(violations, 'violation')}")  # fmt: skip
        self._show(states, text, f"{rate:,.0f} states/s, frontier {frontier:,}")

    def _show(self, count: int, text: str, postfix: str) -> None:
        step = count - self.count
        self.count = count
        self.text = text
        if self._bar is not None:
            self._bar.update(step)
            self._bar.set_postfix_str(postfix)
        if self._widget is not None:
            self._widget.update(count, text)

    def close(self) -> None:
        """Remove the bar; a notebook widget is replaced by a line of the final counts."""
        if self._bar is not None:
            self._bar.close()
        if self._widget is not None:
            self._widget.close(self.count, f"explored: {self.text}")


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    get = getattr(shell, "get_ipython", None)
    ip = get() if callable(get) else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
