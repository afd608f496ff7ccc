"""The Debugger's compare mode in Chromium: both runs' columns side by side, or stacked.

The compare snapshot's fragment (what a notebook output shows, with its own stylesheet) is
opened in an output area 1400 px wide, where run a's and run b's columns must sit side by side,
and 1032 px wide (a normal JupyterLab layout), where they must stack, each the full width,
with nothing cut or scrolling sideways. At the execution whose decision differs, the
difference is shown highlighted above the columns.
"""

from __future__ import annotations

import pytest

from dexviz.widgets import Debugger
from tests.widgets.browser_pages import chromium, each, in_output
from tests.widgets.helpers import runs_differing_in_one_decision

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                                width: r.width, height: r.height}; };
  const outer = document.querySelector('.dx-compare');
  const sides = Array.from(outer.querySelectorAll('.dx-side'));
  const now = outer.querySelector('.dx-diff-now');
  const style = getComputedStyle(now);
  const fonts = Array.from(outer.querySelectorAll('.dx-side td, .dx-side th'))
    .map((c) => parseFloat(getComputedStyle(c).fontSize));
  return {outer: box(outer), sides: sides.map(box),
          titles: sides.map((s) => s.querySelector('.dx-side-title').textContent),
          cut: sides.filter((s) => s.scrollWidth > s.clientWidth + 1).length,
          now: {text: now.textContent, visible: now.getBoundingClientRect().height > 0,
                border: style.borderTopColor, background: style.backgroundColor},
          here: getComputedStyle(outer.querySelector('.dx-here')).color,
          smallest: Math.min(...fonts)};
}"""


def test_compare_columns_sit_side_by_side_or_stack_with_the_difference_highlighted(tmp_path):
    a, b = runs_differing_in_one_decision(tmp_path)
    debugger = Debugger(a, compare=b)
    first = debugger.run_diff.first if debugger.run_diff else None
    assert first is not None
    debugger.seek(next(i for i, e in enumerate(a) if e.seq == first.seq_a))
    fragment = debugger._repr_mimebundle_()["text/html"]
    with chromium() as browser:
        found = each(browser, lambda width: in_output([fragment], width),
                     tmp_path / "compare.html", (1400, 1032), _MEASURE)
    for width, seen in found.items():
        left, right = seen["sides"]
        assert seen["titles"] == ["run a", "run b"], seen
        assert min(left["height"], right["height"]) > 100, f"{width} px: a column is empty"
        assert seen["cut"] == 0, f"{width} px: a column scrolls sideways: {seen}"
        assert seen["smallest"] >= 11, f"{width} px: table text is too small: {seen}"
        assert "decision: go_to(SaveContractEdit) vs dead_end()" in seen["now"]["text"]
        assert seen["now"]["visible"]
        assert seen["now"]["border"] == "rgb(214, 39, 40)", seen["now"]
        assert seen["now"]["background"] != "rgba(0, 0, 0, 0)", seen["now"]
        assert seen["here"] == "rgb(185, 28, 28)", seen
    wide_a, wide_b = found[1400]["sides"]
    assert abs(wide_a["top"] - wide_b["top"]) < 1 and wide_a["right"] <= wide_b["left"], \
        f"1400 px: the columns are not side by side: {found[1400]['sides']}"
    assert min(wide_a["width"], wide_b["width"]) > 540
    narrow_a, narrow_b = found[1032]["sides"]
    outer = found[1032]["outer"]
    assert narrow_b["top"] >= narrow_a["bottom"], \
        f"1032 px: the columns are not stacked: {found[1032]['sides']}"
    assert min(narrow_a["width"], narrow_b["width"]) >= outer["width"] - 1, \
        "1032 px: a stacked column does not take the full width"
