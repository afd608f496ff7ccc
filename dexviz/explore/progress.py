"""Progress while an exploration runs: an ipywidgets bar in Jupyter, tqdm in a terminal.

Neither is required: without them (or with ``progress=False``) nothing is shown.
"""

from __future__ import annotations

import sys
from typing import Any

from dexviz.history._plural import plural


class Progress:
    """Counts schedules; shows them on whatever display is available."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self._bar: Any = None
        self._widget: Any = None
        self.count = 0
        self.text = ""
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
        """Show the latest counts (``pruned``: schedules stopped at a state explored already)."""
        step = schedules - self.count
        self.count = schedules
        text = (f"{plural(schedules, 'schedule')}, {plural(states, 'state')}, "
                f"{plural(violations, 'violation')}")  # fmt: skip
        if pruned is not None:
            text += f", {pruned} pruned"
        self.text = text
        if self._bar is not None:
            self._bar.update(step)
            self._bar.set_postfix_str(plural(states, "state"))
        if self._widget is not None:
            self._widget.update(schedules, text)

    def close(self) -> None:
        """Remove the bar (a widget keeps its last counts)."""
        if self._bar is not None:
            self._bar.close()
        if self._widget is not None:
            self._widget.close(self.count)


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    get = getattr(shell, "get_ipython", None)
    ip = get() if callable(get) else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
