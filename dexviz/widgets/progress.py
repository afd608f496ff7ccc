"""ProgressBar: an ipywidgets progress bar with a line of counts, for long computations."""

from __future__ import annotations

from typing import Any


class ProgressBar:
    """Shows a bar and a label in the notebook; the maximum grows when a count passes it.

    Raises:
        ImportError: ipywidgets or IPython is not installed.
    """

    def __init__(self, total: int | None) -> None:
        import ipywidgets
        from IPython.display import display

        self._bar: Any = ipywidgets.IntProgress(value=0, min=0, max=total or 1)
        self._label: Any = ipywidgets.Label("starting...")
        display(ipywidgets.HBox([self._bar, self._label]))  # type: ignore[no-untyped-call]

    def update(self, value: int, text: str) -> None:
        """Move the bar to ``value`` and show ``text``."""
        if self._bar.max < value:
            self._bar.max = value * 2
        self._bar.value = value
        self._label.value = text

    def close(self, value: int) -> None:
        """Fill the bar at the final ``value``; the last counts stay visible."""
        self._bar.max = max(value, 1)
        self._bar.value = value
