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
        self._box: Any = ipywidgets.HBox([self._bar, self._label])
        # A display id, so that close() can replace the widget by its final counts in place.
        self._handle: Any = display(self._box, display_id=True)  # type: ignore[no-untyped-call]

    def update(self, value: int, text: str) -> None:
        """Move the bar to ``value`` and show ``text``."""
        if self._bar.max < value:
            self._bar.max = value * 2
        self._bar.value = value
        self._label.value = text

    def close(self, value: int, text: str = "") -> None:
        """Replace the bar by a line of the final counts (``text``).

        A saved notebook then shows the counts, not the widget's placeholder
        (``HBox(children=(IntProgress...``), which needs a live kernel to draw.
        """
        self._bar.max = max(value, 1)
        self._bar.value = value
        final = FinalCounts(text or self._label.value)
        if self._handle is not None:
            self._handle.update(final)
        self._box.close()


class FinalCounts:
    """The line a finished progress bar leaves in the notebook, as text and as HTML."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html

        return f"<p class='dexviz-progress-done'>{html.escape(self.text)}</p>"
