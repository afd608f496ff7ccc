"""The debugger's stylesheet, shared by the widget and the static snapshot.

Every rule is scoped under ``.dexviz-debugger``, so a page with several debuggers, or a
notebook theme, is not disturbed. The cursor's reset is wrapped in ``:where()`` (one class of
specificity), so each widget's own cursor rule (scoped to its instance's class) wins over every
later widget's copy of this stylesheet. An HTML widget's content may be narrower than what it holds
(``min-width: 0``), so a picture kept at a readable width scrolls in its own panel instead of
widening the whole debugger. Where the graph and the panels do not both fit side by side
(a 1032 px notebook output), the panels wrap below the graph: their tables never break a name
inside a word, and the graph gets the whole width. Highlight classes are the ones
``highlight`` adds to SVG groups (``dx-selected``, ``dx-active``, ``dx-holder``,
``dx-future``, ``dx-unfocused``).
"""

from __future__ import annotations

__all__ = ["CSS", "LEGEND", "SELECTED_COLOR"]

SELECTED_COLOR = "#f59e0b"
"""Amber: the selected event's node and the timeline cursor."""

CSS = """
.dexviz-debugger { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial,
  sans-serif; font-size: 12px; color: #1e293b; line-height: 1.35; }
.dexviz-debugger .dx-main { display: flex; gap: 12px; align-items: flex-start;
  flex-wrap: wrap; }
.dexviz-debugger .dx-left { flex: 3 1 0; min-width: min(560px, 100%); }
.dexviz-debugger .dx-right { flex: 2 1 0; min-width: min(500px, 100%); max-width: 560px; }
.dexviz-debugger .dx-graph { border: 1px solid #e2e8f0; border-radius: 6px; background: #fff;
  overflow: auto; max-height: 760px; padding: 4px; container-type: inline-size; }
.dexviz-debugger .dx-small-text { display: none; margin: 0 0 4px 0; padding: 3px 6px;
  color: #92400e; background: #fffbeb; border-radius: 4px; font-size: 11.5px; }
.dexviz-debugger .dx-small-text.dx-always { display: block; }
.dexviz-debugger .dx-graph svg, .dexviz-debugger .dx-timeline svg { max-width: 100%;
  height: auto; display: block; margin: 0 auto; }
.dexviz-debugger .dx-timeline { border: 1px solid #e2e8f0; border-radius: 6px;
  background: #fff; margin-top: 8px; padding: 4px; overflow: auto; }
.dexviz-debugger .dx-graph.dx-zoom-full svg { max-width: none; margin: 0; }
.dexviz-debugger .dx-graph.dx-zoom-double svg { max-width: none; margin: 0; }
.dexviz-debugger .dx-graph.dx-zoom-focus svg { max-width: none; }
.dexviz-debugger .widget-html-content { min-width: 0; }
.dexviz-debugger .dx-tl { position: relative; width: 100%; }
.dexviz-debugger .dx-tl svg { width: 100%; max-width: none; height: auto; }
.dexviz-debugger :where(.dx-tl .dx-cursor) { position: absolute; width: 0;
  border-left: 2px solid #f59e0b; pointer-events: none; left: 0; top: 0; height: 0; }
.dexviz-debugger .dx-hint { color: #64748b; font-style: italic; padding: 8px; }
.dexviz-debugger .dx-heading { display: flex; gap: 10px; align-items: baseline;
  flex-wrap: wrap; padding: 4px 2px 8px 2px; font-size: 13px; }
.dexviz-debugger .dx-heading .dx-pos { font-weight: 700; }
.dexviz-debugger .dx-heading .dx-time { color: #64748b; font-variant-numeric: tabular-nums; }
.dexviz-debugger .dx-heading .dx-kind { font-weight: 600; color: #0f172a; }
.dexviz-debugger .dx-heading .dx-exec { color: #b45309; font-weight: 600; }
.dexviz-debugger .dx-heading .dx-status { margin-left: auto; color: #475569;
  border: 1px solid #cbd5e1; border-radius: 10px; padding: 0 8px; font-size: 11px; }
.dexviz-debugger .dx-panel { border: 1px solid #e2e8f0; border-radius: 6px;
  padding: 6px 8px; margin-bottom: 8px; background: #fff; overflow-x: auto; }
.dexviz-debugger .dx-title { font-weight: 700; font-size: 12px; margin-bottom: 4px;
  color: #0f172a; }
.dexviz-debugger .dx-table { border-collapse: collapse; width: 100%; font-size: 11.5px; }
.dexviz-debugger .dx-table th { text-align: left; color: #64748b; font-weight: 600;
  border-bottom: 1px solid #e2e8f0; padding: 2px 6px; }
.dexviz-debugger .dx-table td { padding: 2px 6px; border-bottom: 1px solid #f1f5f9;
  vertical-align: top; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas,
  monospace; word-break: normal; overflow-wrap: normal; hyphens: none; }
.dexviz-debugger .dx-table td.dx-name { color: #334155; font-weight: 600; }
.dexviz-debugger .dx-table .dx-time { white-space: nowrap; }
.dexviz-debugger .dx-detail .dx-table td.dx-name { width: 6em; color: #64748b; }
.dexviz-debugger .dx-empty { color: #94a3b8; font-style: italic; margin: 2px 0; }
.dexviz-debugger tr.dx-reserved td { background: #fff7ed; }
.dexviz-debugger tr.dx-reserved td.dx-where { color: #b45309; font-weight: 700; }
.dexviz-debugger tr.dx-queued td.dx-where { color: #15803d; font-weight: 600; }
.dexviz-debugger tr.dx-none td { color: #94a3b8; }
.dexviz-debugger tr.dx-current td { background: #fef3c7; }
.dexviz-debugger tr.dx-phase-execute td.dx-name { color: #3f6212; }
.dexviz-debugger tr.dx-phase-waiting td.dx-name { color: #a16207; }
.dexviz-debugger tr.dx-phase-backoff td.dx-name { color: #b91c1c; }
.dexviz-debugger details pre { max-height: 220px; overflow: auto; background: #f8fafc;
  padding: 4px; font-size: 10.5px; margin: 4px 0 0 0; }
.dexviz-debugger .dx-message { color: #475569; min-height: 1.4em; }
.dexviz-debugger g.node.dx-future, .dexviz-debugger g.edge.dx-future { opacity: 0.16; }
.dexviz-debugger g.node.dx-unfocused, .dexviz-debugger g.edge.dx-unfocused { opacity: 0.2; }
.dexviz-debugger g.node.dx-active { filter: drop-shadow(0 0 3px #65a30d); }
.dexviz-debugger g.node.dx-holder { filter: drop-shadow(0 0 4px #2563eb)
  drop-shadow(0 0 2px #2563eb); }
.dexviz-debugger g.node.dx-holder > polygon, .dexviz-debugger g.node.dx-holder > path {
  stroke: #2563eb; stroke-width: 3px; }
.dexviz-debugger g.node.dx-selected { filter: drop-shadow(0 0 5px #f59e0b)
  drop-shadow(0 0 2px #f59e0b); }
.dexviz-debugger g.node.dx-selected.dx-holder { filter: drop-shadow(0 0 6px #f59e0b)
  drop-shadow(0 0 3px #2563eb); }
.dexviz-debugger g.node.dx-selected > polygon, .dexviz-debugger g.node.dx-selected > path {
  stroke: #f59e0b; stroke-width: 3px; }
.dexviz-debugger g.node.dx-queued > polygon, .dexviz-debugger g.node.dx-queued > path,
.dexviz-debugger g.node.dx-queued > ellipse { stroke: #15803d; stroke-width: 2.5px; }
.dexviz-debugger g.node.dx-held > polygon, .dexviz-debugger g.node.dx-held > path,
.dexviz-debugger g.node.dx-held > ellipse { stroke: #2563eb; stroke-width: 2.5px; }
.dexviz-debugger .dx-legend { display: flex; gap: 12px; flex-wrap: wrap; color: #475569;
  font-size: 11px; padding: 4px 2px; }
.dexviz-debugger .dx-legend span::before { content: ""; display: inline-block; width: 10px;
  height: 10px; border-radius: 3px; margin-right: 4px; vertical-align: -1px; }
.dexviz-debugger .dx-legend .dx-l-selected::before { background: #f59e0b; }
.dexviz-debugger .dx-legend .dx-l-active::before { background: #65a30d; }
.dexviz-debugger .dx-legend .dx-l-holder::before { background: #2563eb; }
.dexviz-debugger .dx-legend .dx-l-future::before { background: #cbd5e1; opacity: 0.5; }
"""
"""The stylesheet (one ``<style>`` block's content)."""

LEGEND = (
    '<div class="dx-legend"><span class="dx-l-selected">selected event</span>'
    '<span class="dx-l-active">active</span><span class="dx-l-holder">holds a message'
    ' (token)</span><span class="dx-l-future">not created yet</span></div>'
)
"""A one-line key to the graph's highlight colours."""
