"""search_flows: a small visibility query over indexed Attributes and FlowType (R76, R161)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from dexviz.engine.core.state import FlowRun
from dexviz.sdk.attribute_match import AttributeMatch
from dexviz.sdk.codec import Value, WireKind
from dexviz.sdk.results import SearchFlowEntry, SearchFlowsPage

_TERM = re.compile(r"^\s*([A-Za-z_][\w]*)\s*(=|!=|>=|<=|>|<)\s*(.+?)\s*$")
_DEFAULT_PAGE = 1000


def _literal(text: str, query: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        raise ValueError(f"search_flows: cannot read the value {text!r} in {query!r}") from None


def parse_query(query: str) -> list[tuple[str, AttributeMatch]]:
    """Split ``Key = 'value' AND Other > 3`` into (key, match) terms."""
    terms: list[tuple[str, AttributeMatch]] = []
    if not query.strip():
        return terms
    for part in re.split(r"\s+AND\s+", query.strip(), flags=re.IGNORECASE):
        found = _TERM.match(part)
        if found is None:
            raise ValueError(f"search_flows: cannot read {part!r}; write Key = 'value' AND ...")
        key, op, raw = found.groups()
        terms.append((key, AttributeMatch("==" if op == "=" else op, _literal(raw, query))))
    return terms


def index_fields(run: FlowRun) -> dict[str, Any]:
    """The search fields of a run: FlowType and its indexed Attributes' current values."""
    fields: dict[str, Any] = {"FlowType": run.flow_type}
    for attribute in run.definition.attributes.values():
        if attribute.index is None:
            continue
        key = attribute.index.index_key or attribute.name
        prefix = attribute.name + "/"
        for stored, value in run.attributes.items():
            if stored == attribute.name or stored.startswith(prefix):
                fields[key] = value  # map instances share one field: the last one wins (R76)
    return fields


def _wire(value: Any) -> Value:
    if isinstance(value, bool):
        return Value(WireKind.BOOL, value)
    if isinstance(value, int):
        return Value(WireKind.INT64, value)
    if isinstance(value, float):
        return Value(WireKind.DOUBLE, value)
    return Value(WireKind.STRING, str(value))


def _time(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


def search(runs: Iterable[FlowRun], query: str, page_size: int, token: str) -> SearchFlowsPage:
    """Return one page of the runs matching ``query`` (ordered by start time, then id)."""
    if page_size < 0:
        raise ValueError(f"search_flows: page_size must be >= 0, got {page_size}")
    terms = parse_query(query)
    size = page_size or _DEFAULT_PAGE
    offset = int(token) if token else 0
    matched = []
    for run in sorted(runs, key=lambda r: (r.started_ns, r.flow_id, r.run_id)):
        fields = index_fields(run)
        if all(match.matches(fields.get(key)) for key, match in terms):
            matched.append((run, fields))
    page = matched[offset : offset + size]
    entries = tuple(
        SearchFlowEntry(
            run.flow_id,
            run.run_id,
            run.flow_type,
            run.status,
            _time(run.started_ns) or datetime.now(UTC),
            _time(run.closed_ns),
            {k: _wire(v) for k, v in sorted(fields.items())},
        )
        for run, fields in page
    )
    following = offset + size if offset + size < len(matched) else None
    return SearchFlowsPage(entries, "" if following is None else str(following))
