"""The replay page's own stylesheet and its small inline script (no library, no network).

The script reads the JSON data island and, per event, swaps in the stored panel fragments,
sets each graph group's classes to its own classes plus the frame's extra ones (exactly what
``MarkedSvg.with_classes`` writes for the widget), and moves the timeline cursor. Without
JavaScript none of it runs and the page stays the static snapshot at its first-shown event.
"""

from __future__ import annotations

__all__ = ["REPORT_CSS", "REPORT_JS"]

REPORT_CSS = """
body { margin: 0; background: #f8fafc; }
.dexviz-report { max-width: 1680px; margin: 0 auto; padding: 12px 16px 24px 16px; }
.dexviz-report h1 { font-size: 17px; margin: 0 0 2px 0; color: #0f172a; }
.dexviz-report .dx-sub { color: #64748b; margin-bottom: 8px; }
.dexviz-report .dx-controls { display: none; gap: 6px; align-items: center; flex-wrap: wrap;
  padding: 6px 0 8px 0; }
.dexviz-report.dx-js .dx-controls { display: flex; }
.dexviz-report .dx-controls button, .dexviz-report .dx-controls select { font: inherit;
  padding: 3px 9px; border: 1px solid #cbd5e1; border-radius: 5px; background: #fff;
  cursor: pointer; }
.dexviz-report .dx-controls button:disabled { color: #94a3b8; cursor: default; }
.dexviz-report .dx-controls button[aria-pressed="true"] { background: #0f172a; color: #fff;
  border-color: #0f172a; }
.dexviz-report .dx-controls input[type=range] { flex: 1 1 240px; min-width: 200px; }
.dexviz-report .dx-controls .dx-counter { font-variant-numeric: tabular-nums; min-width: 6em; }
.dexviz-report .dx-controls .dx-sep { width: 10px; }
.dexviz-report .dx-graph-section > h2, .dexviz-report .dx-timeline-section > h2 {
  font-size: 12px; color: #475569; margin: 8px 0 4px 0; }
.dexviz-report.dx-js .dx-graph-section > h2 { display: none; }
.dexviz-report.dx-js .dx-graph-section[hidden] { display: none; }
.dexviz-report.dx-js .dx-timeline-section[hidden] { display: none; }
.dexviz-report .dx-eventlist { max-height: 320px; overflow: auto; margin: 0;
  padding: 0 0 0 0; list-style: none; font-family: ui-monospace, "SFMono-Regular", Menlo,
  Consolas, monospace; font-size: 11.5px; }
.dexviz-report .dx-eventlist li { padding: 1px 6px; border-bottom: 1px solid #f1f5f9;
  cursor: pointer; white-space: nowrap; }
.dexviz-report .dx-eventlist li.dx-current { background: #fef3c7; font-weight: 700; }
.dexviz-report .dx-failures { margin: 0; padding-left: 18px; }
.dexviz-report .dx-failure { margin-bottom: 4px; }
.dexviz-report .dx-failure .dx-error { color: #b91c1c; }
.dexviz-report .dx-failure .dx-outcome { color: #64748b; }
.dexviz-report .dx-trace pre { max-height: 260px; overflow: auto; background: #f8fafc;
  padding: 4px; font-size: 10.5px; margin: 4px 0 0 0; white-space: pre; }
.dexviz-report .dx-foot { color: #94a3b8; font-size: 11px; margin-top: 10px; }
"""
"""Rules for the report page on top of the Debugger's stylesheet (``replay.theme.CSS``)."""

REPORT_JS = r"""
(function () {
  "use strict";
  var root = document.getElementById("dx-report");
  var island = document.getElementById("dx-data");
  if (!root || !island) { return; }
  var data = JSON.parse(island.textContent);
  var F = data.frags, C = data.classes, E = data.events, K = data.kinds;
  var cur = -1;
  function $(sel) { return root.querySelector(sel); }
  function all(sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); }
  var slots = all("[data-panel]");
  var heading = $("#dx-heading");
  var compareSlot = $("#dx-compare");
  var slider = $("#dx-slider"), counter = $("#dx-counter"), kindSel = $("#dx-kind");
  var list = $(".dx-eventlist"), items = all(".dx-eventlist li");
  var graphs = {};
  Object.keys(data.graphs).forEach(function (key) {
    var box = root.querySelector('[data-graph-key="' + key + '"]');
    if (!box) { return; }
    var byId = {};
    Array.prototype.forEach.call(box.querySelectorAll("g[id]"), function (g) {
      byId[g.getAttribute("id")] = g;
    });
    var spec = data.graphs[key];
    graphs[key] = { els: spec.ids.map(function (id) { return byId[id] || null; }),
                    base: spec.base };
  });
  function mark(key, pairs) {
    var g = graphs[key];
    if (!g) { return; }
    var extra = {};
    for (var j = 0; j + 1 < pairs.length; j += 2) { extra[pairs[j]] = C[pairs[j + 1]]; }
    for (var n = 0; n < g.els.length; n++) {
      if (!g.els[n]) { continue; }
      var added = extra[n];
      g.els[n].setAttribute("class", added ? g.base[n] + " " + added : g.base[n]);
    }
  }
  var graphKind = root.getAttribute("data-graph") || "lineage";
  function showSections(run) {
    all(".dx-graph-section").forEach(function (s) {
      var kind = s.getAttribute("data-kind");
      var runOk = kind !== "lineage" || s.getAttribute("data-run") === String(run);
      s.hidden = !(kind === graphKind && runOk);
    });
    all(".dx-timeline-section").forEach(function (s) {
      s.hidden = s.getAttribute("data-run") !== String(run);
    });
    all("[data-show-graph]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-show-graph") === graphKind));
    });
  }
  function show(i) {
    if (i < 0 || i >= E.length) { return; }
    var e = E[i];
    cur = i;
    heading.innerHTML = F[e.h];
    if (compareSlot && e.c !== undefined) { compareSlot.innerHTML = F[e.c]; }
    for (var p = 0; p < slots.length; p++) { slots[p].innerHTML = F[e.p[p]]; }
    mark("l" + e.r, e.l);
    mark("d", e.d);
    showSections(e.r);
    var cursor = root.querySelector('.dx-timeline-section[data-run="' + e.r + '"] .dx-cursor');
    if (cursor) { cursor.setAttribute("style", F[e.t]); }
    items.forEach(function (li, n) { li.classList.toggle("dx-current", n === i); });
    if (items[i] && list) {
      var top = items[i].offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 2);
      }
    }
    slider.value = String(i);
    counter.textContent = (i + 1) + " / " + E.length;
    $("#dx-first").disabled = $("#dx-prev").disabled = i === 0;
    $("#dx-next").disabled = $("#dx-last").disabled = i === E.length - 1;
    root.setAttribute("data-index", String(i));
  }
  function find(step) {
    var want = kindSel.value;
    for (var i = cur + step; i >= 0 && i < E.length; i += step) {
      if (want === "" || K[E[i].k] === want) { return i; }
    }
    return -1;
  }
  function on(id, fn) { $(id).addEventListener("click", fn); }
  on("#dx-first", function () { show(0); });
  on("#dx-prev", function () { show(cur - 1); });
  on("#dx-next", function () { show(cur + 1); });
  on("#dx-last", function () { show(E.length - 1); });
  on("#dx-find-prev", function () { var i = find(-1); if (i >= 0) { show(i); } });
  on("#dx-find-next", function () { var i = find(1); if (i >= 0) { show(i); } });
  slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
  all("[data-show-graph]").forEach(function (b) {
    b.addEventListener("click", function () {
      graphKind = b.getAttribute("data-show-graph");
      root.setAttribute("data-graph", graphKind);
      showSections(E[cur].r);
    });
  });
  all("[data-zoom]").forEach(function (b) {
    b.addEventListener("click", function () {
      var zoom = b.getAttribute("data-zoom");
      all("[data-zoom]").forEach(function (o) {
        o.setAttribute("aria-pressed", String(o === b));
      });
      all(".dx-graph").forEach(function (box) {
        box.classList.remove("dx-zoom-fit", "dx-zoom-full", "dx-zoom-double");
        box.classList.add("dx-zoom-" + zoom);
        var svg = box.querySelector("svg");
        if (!svg) { return; }
        if (!svg.hasAttribute("data-w")) {
          svg.setAttribute("data-w", String(svg.width.baseVal.value));
          svg.setAttribute("data-h", String(svg.height.baseVal.value));
        }
        var k = zoom === "double" ? 2 : 1;
        svg.style.width = zoom === "fit" ? "" : (k * svg.getAttribute("data-w")) + "px";
        svg.style.height = zoom === "fit" ? "" : (k * svg.getAttribute("data-h")) + "px";
      });
    });
  });
  root.addEventListener("click", function (ev) {
    var target = ev.target.closest("[data-i]");
    if (!target || !root.contains(target)) { return; }
    if (ev.target.closest("summary, pre")) { return; }
    ev.preventDefault();
    show(parseInt(target.getAttribute("data-i"), 10));
  });
  document.addEventListener("keydown", function (ev) {
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.altKey ||
        ev.ctrlKey || ev.metaKey) { return; }
    var moves = { ArrowRight: cur + 1, ArrowLeft: cur - 1, Home: 0, End: E.length - 1 };
    if (Object.prototype.hasOwnProperty.call(moves, ev.key)) {
      ev.preventDefault();
      show(moves[ev.key]);
    }
  });
  root.classList.add("dx-js");
  show(parseInt(root.getAttribute("data-index"), 10) || 0);
}());
"""
"""The replay's script: controls, keyboard (arrows, Home, End) and the per-event redraw."""
