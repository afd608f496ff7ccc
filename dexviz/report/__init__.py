"""One-file HTML replay of a Flow run: graphs, panels, timeline and controls in one page.

>>> dexviz.report.write_report(run, "run.html")   # doctest: +SKIP

The same page comes from ``run.to_html(path)``, ``Debugger(...).to_html(path)`` and
``dexviz report HISTORY -o run.html``; ``write_report(run, path, compare=other)`` (or
``dexviz report A --compare B``) steps a second run with it, as ``Debugger(a, compare=b)``.
"""

from dexviz.report.page import CompareSource, ReplaySource, report_html, write_report

__all__ = ["CompareSource", "ReplaySource", "report_html", "write_report"]
