"""The shared DOT writer: quoting, escaping, attribute order, statements, HTML-like labels."""

from __future__ import annotations

from dexviz.viz.dot import (
    DotGraph,
    HtmlLabel,
    LegendItem,
    cell,
    font,
    format_attrs,
    html_escape,
    legend_label,
    quote,
    row,
    table,
    wrap_lines,
)


def test_quote_escapes_backslashes_quotes_and_newlines():
    assert quote('say "hi"\\now\nnext') == '"say \\"hi\\"\\\\now\\nnext"'
    assert quote("step:EditContract") == '"step:EditContract"'


def test_html_escape_covers_markup_characters():
    assert html_escape('a < b & c > "d"') == "a &lt; b &amp; c &gt; &quot;d&quot;"


def test_attributes_are_sorted_and_none_is_dropped():
    attrs = {"label": "x", "color": "#fff", "id": None, "penwidth": 1.5, "constraint": False}
    assert format_attrs(attrs) == (
        ' [color="#fff", constraint="false", label="x", penwidth="1.5"]'
    )
    assert format_attrs({}) == ""
    assert format_attrs({"label": HtmlLabel("<B>x</B>")}) == " [label=<<B>x</B>>]"


def test_graph_source_is_deterministic_text():
    graph = DotGraph("G", graph_attrs={"rankdir": "LR"}, node_defaults={"shape": "box"})
    graph.node("step:A", {"id": "step:A", "class": "step start"})
    graph.node("step:B", {})
    graph.edge("step:A", "step:B", {"label": "go_to"}, source_port="d0")
    graph.same_rank("same", ["step:A", "step:B"])
    graph.comment("two\nlines")
    assert graph.source() == (
        'digraph "G" {\n'
        '  graph [rankdir="LR"];\n'
        '  node [shape="box"];\n'
        '  "step:A" [class="step start", id="step:A"];\n'
        '  "step:B";\n'
        '  "step:A":"d0" -> "step:B" [label="go_to"];\n'
        '  {rank=same; "step:A" "step:B"}\n'
        "  // two\n"
        "  // lines\n"
        "}\n"
    )


def test_html_label_helpers_escape_text_and_sort_attributes():
    markup = table([row(cell(font("a<b", bold=True, color="#123", size=9), {"PORT": "p",
                                                                          "ALIGN": "LEFT"}))],
                   {"BORDER": 0})
    assert markup == HtmlLabel(
        '<TABLE BORDER="0"><TR><TD ALIGN="LEFT" PORT="p">'
        '<FONT COLOR="#123" POINT-SIZE="9"><B>a&lt;b</B></FONT></TD></TR></TABLE>'
    )
    assert font("plain") == "plain"
    assert font("<I>x</I>", escape=False, italic=True) == "<I><I>x</I></I>"


def test_wrap_lines_cuts_with_an_ellipsis():
    assert wrap_lines("one two three four", 9, 5) == ["one two", "three", "four"]
    assert wrap_lines("one two three four", 9, 2) == ["one two", "three…"]
    assert wrap_lines("", 9, 2) == [""]


def test_legend_has_a_title_and_one_row_per_item():
    label = legend_label("Legend", [
        LegendItem("Step", "#94a3b8", fill="#ffffff"),
        LegendItem("Execute failure", "#c43b62", kind="edge"),
        LegendItem("publish", "#4d7b69", kind="edge", dashed=True),
    ])
    assert label.markup.count("<TR>") == 4
    assert "Legend" in label.markup and "━━━▶" in label.markup and "╌╌╌▶" in label.markup
    assert 'BGCOLOR="#ffffff"' in label.markup
