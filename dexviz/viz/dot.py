"""Pure DOT writing shared by every dexviz graph: quoting, attributes, HTML-like labels, legends.

Nothing here needs Graphviz: it builds text. Attributes are written in sorted key order and
statements in insertion order, so the same input always gives the same DOT text (golden files
pin it). HTML-like labels (cards) are built with :func:`table`, :func:`row`, :func:`cell` and
:func:`font`, which escape text; :class:`HtmlLabel` marks markup that must not be quoted.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "AttrValue",
    "DotGraph",
    "HtmlLabel",
    "LegendItem",
    "cell",
    "font",
    "format_attrs",
    "html_escape",
    "legend_label",
    "plain_text",
    "quote",
    "row",
    "shorten",
    "table",
    "wrap_lines",
]


@dataclass(frozen=True)
class HtmlLabel:
    """Markup for an HTML-like label; written as ``<...>`` instead of a quoted string."""

    markup: str


AttrValue = str | int | float | bool | HtmlLabel | None

MAX_DOT_STRING = 16_000
"""Graphviz's scanner rejects a string or HTML label over 16,384 characters; stay below."""
MAX_LABEL_CHARS = 2_000
"""Plain labels and tooltips are cut here: past this, nobody reads them."""
_BREAK = re.compile(r"<BR\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


def quote(text: str) -> str:
    """A DOT double-quoted string: backslashes, quotes and newlines escaped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\n", "\\n")
    return f'"{escaped}"'


def html_escape(text: str) -> str:
    """Escape text for an HTML-like label (``&``, ``<``, ``>``, ``"``)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def format_attrs(attrs: Mapping[str, AttrValue]) -> str:
    """``[a="1", b=<...>]`` with keys sorted and None values dropped; empty string if none."""
    parts = []
    for key in sorted(attrs):
        value = attrs[key]
        if value is None:
            continue
        parts.append(f"{key}={_value(value)}")
    return f" [{', '.join(parts)}]" if parts else ""


def _value(value: AttrValue) -> str:
    if isinstance(value, HtmlLabel):
        if len(value.markup) <= MAX_DOT_STRING:
            return f"<{value.markup}>"
        # Markup cannot be cut safely: an oversized card falls back to its plain text.
        return quote(shorten(plain_text(value.markup)))
    if isinstance(value, bool):
        return quote("true" if value else "false")
    return quote(shorten(str(value)))


def shorten(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note saying how much was left out.

    Graphviz cannot read a string longer than 16,384 characters, and a label that long is
    unreadable anyway; the cut keeps the start, which names what the label is about.
    """
    if len(text) <= limit:
        return text
    note = f" … ({len(text) - limit + 40:,} more characters)"
    return text[: limit - 40] + note


def plain_text(markup: str) -> str:
    """The text of HTML-like label markup: tags dropped (``<BR/>`` as a newline), unescaped."""
    text = _BREAK.sub("\n", markup)
    text = _TAG.sub(" ", text)
    text = " ".join(part for part in text.split(" ") if part)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
        text = text.replace(entity, char)
    return text.strip()


@dataclass
class DotGraph:
    """A DOT ``digraph`` being written: defaults, then nodes, edges and subgraphs in order."""

    name: str
    graph_attrs: dict[str, AttrValue] = field(default_factory=dict)
    node_defaults: dict[str, AttrValue] = field(default_factory=dict)
    edge_defaults: dict[str, AttrValue] = field(default_factory=dict)
    _body: list[str] = field(default_factory=list)

    def node(self, node_id: str, attrs: Mapping[str, AttrValue]) -> None:
        """Add a node statement."""
        self._body.append(f"  {quote(node_id)}{format_attrs(attrs)};")

    def edge(
        self, source: str, target: str, attrs: Mapping[str, AttrValue], *,
        source_port: str | None = None, target_port: str | None = None,
    ) -> None:
        """Add an edge statement, optionally from/to a port of an HTML-like label."""
        tail = _endpoint(source, source_port)
        head = _endpoint(target, target_port)
        self._body.append(f"  {tail} -> {head}{format_attrs(attrs)};")

    def same_rank(self, rank: str, node_ids: Iterable[str]) -> None:
        """Constrain nodes to one rank: ``rank`` is ``same``, ``min``, ``max``, ``source``..."""
        ids = " ".join(quote(node_id) for node_id in node_ids)
        if ids:
            self._body.append(f"  {{rank={rank}; {ids}}}")

    def comment(self, text: str) -> None:
        """Add a ``//`` comment line (one per line of ``text``)."""
        self._body.extend(f"  // {line}" for line in text.splitlines())

    def source(self) -> str:
        """The complete DOT text, ending with a newline."""
        lines = [f"digraph {quote(self.name)} {{"]
        for keyword, attrs in (
            ("graph", self.graph_attrs),
            ("node", self.node_defaults),
            ("edge", self.edge_defaults),
        ):
            if attrs:
                lines.append(f"  {keyword}{format_attrs(attrs)};")
        lines.extend(self._body)
        lines.append("}")
        return "\n".join(lines) + "\n"


def _endpoint(node_id: str, port: str | None) -> str:
    return quote(node_id) if port is None else f"{quote(node_id)}:{quote(port)}"


def font(
    text: str, *, color: str | None = None, size: float | None = None,
    bold: bool = False, italic: bool = False, escape: bool = True,
) -> str:
    """``<FONT>``-wrapped text (escaped unless ``escape=False``), optionally bold/italic."""
    markup = html_escape(text) if escape else text
    if bold:
        markup = f"<B>{markup}</B>"
    if italic:
        markup = f"<I>{markup}</I>"
    attrs = _html_attrs({"COLOR": color, "POINT-SIZE": size})
    return f"<FONT{attrs}>{markup}</FONT>" if attrs else markup


def cell(content: str, attrs: Mapping[str, AttrValue] | None = None) -> str:
    """A ``<TD>`` with already-built inner markup."""
    return f"<TD{_html_attrs(attrs or {})}>{content}</TD>"


def row(*cells: str) -> str:
    """A ``<TR>`` of cells."""
    return f"<TR>{''.join(cells)}</TR>"


def table(rows: Sequence[str], attrs: Mapping[str, AttrValue] | None = None) -> HtmlLabel:
    """A ``<TABLE>`` label of rows."""
    return HtmlLabel(f"<TABLE{_html_attrs(attrs or {})}>{''.join(rows)}</TABLE>")


def wrap_lines(text: str, width: int, max_lines: int) -> list[str]:
    """``text`` wrapped at ``width`` characters, cut to ``max_lines`` with an ellipsis."""
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: max(width - 1, 1)].rstrip() + "…"
    return lines


def _html_attrs(attrs: Mapping[str, AttrValue]) -> str:
    parts = [
        f' {key}="{html_escape(str(attrs[key]))}"'
        for key in sorted(attrs)
        if attrs[key] is not None
    ]
    return "".join(parts)


@dataclass(frozen=True)
class LegendItem:
    """One legend row: a node swatch (filled box) or an edge swatch (a coloured line)."""

    label: str
    color: str
    kind: str = "node"
    fill: str | None = None
    dashed: bool = False
    glyph: str | None = None


def legend_label(title: str, items: Sequence[LegendItem], *, fontsize: float = 9) -> HtmlLabel:
    """An HTML-like legend table: a title row, then one swatch and caption per item."""
    rows = [row(cell(font(title, bold=True, size=fontsize + 1), {"COLSPAN": 2, "ALIGN": "LEFT"}))]
    for item in items:
        rows.append(row(_swatch(item, fontsize), cell(font(item.label, size=fontsize),
                                                       {"ALIGN": "LEFT"})))
    return table(rows, {
        "BORDER": 1, "CELLBORDER": 0, "CELLSPACING": 2, "CELLPADDING": 3,
        "COLOR": "#cbd5e1", "BGCOLOR": "#ffffff", "STYLE": "rounded",
    })


def _swatch(item: LegendItem, fontsize: float) -> str:
    if item.kind == "edge":
        line = item.glyph or ("╌╌╌▶" if item.dashed else "━━━▶")
        return cell(font(line, color=item.color, size=fontsize), {"ALIGN": "CENTER"})
    return cell(font("      ", size=fontsize), {
        "BGCOLOR": item.fill or "#ffffff", "COLOR": item.color, "BORDER": 1,
        "WIDTH": 28, "FIXEDSIZE": "FALSE",
    })
