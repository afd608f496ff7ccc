"""One-file HTML replay of a Flow run: graphs, panels, timeline and controls in one page.

>>> dexviz.report.write_report(run, "run.html")   # doctest: +SKIP

The same page comes from ``run.to_html(path)``, ``Debugger(...).to_html(path)`` and
``dexviz report HISTORY -o run.html``.
"""

from dexviz.report.page import ReplaySource, report_html, write_report

__all__ = ["ReplaySource", "report_html", "write_report"]
