"""The debugger's panels as small HTML fragments: pure functions of the state at the cursor.

Each function returns one ``<div class="dx-panel">`` with a heading and a table; the widget puts
them in HTML widgets and the static snapshot writes them into a page. Values are shown as compact
JSON, cut at :data:`VALUE_LIMIT` characters, and always HTML-escaped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from dexviz.analysis.state import ActiveExecution
from dexviz.history import Event, EventKind
from dexviz.history.instance_names import condition_label, shown_name
from dexviz.replay._index import HistoryIndex
from dexviz.replay.model import CursorState

__all__ = [
    "ACTIVE_ROWS",
    "VALUE_LIMIT",
    "active_table",
    "attributes_table",
    "channel_table",
    "event_detail",
    "event_list",
    "format_value",
    "heading",
]

ACTIVE_ROWS = 40
"""Most active executions listed; the busy ones, holders and the selected one come first."""

VALUE_LIMIT = 96
"""Longest value text shown in a table cell before it is cut with an ellipsis."""

_K = EventKind
_PHASE_TEXT = {"queued": "queued", "wait_for": "running WaitFor", "waiting": "waiting",
               "execute": "running Execute", "backoff": "retry backoff"}


def format_value(value: Any, limit: int = VALUE_LIMIT) -> str:
    """``value`` as compact JSON text (strings quoted), cut at ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True,
                          default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{escape(text)}</td>"


def _table(head: Sequence[str], rows: Iterable[str], empty: str) -> str:
    body = "".join(rows)
    if not body:
        return f'<p class="dx-empty">{escape(empty)}</p>'
    cols = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<table class="dx-table"><thead><tr>{cols}</tr></thead><tbody>{body}</tbody></table>'


def _panel(title: str, body: str, name: str) -> str:
    return (f'<div class="dx-panel dx-{name}"><div class="dx-title">{escape(title)}</div>'
            f"{body}</div>")


def heading(index: int, total: int, event: Event, seconds: float, status: str) -> str:
    """The line above the panels: position, time, the event, and the run's status."""
    return (f'<div class="dx-heading"><span class="dx-pos">event {index + 1} / {total}</span>'
            f'<span class="dx-time">+{seconds:.3f} s</span>'
            f'<span class="dx-kind">{escape(str(event.kind))}</span>'
            f'<span class="dx-exec">{escape(event.execution_id or "")}</span>'
            f'<span class="dx-status">{escape(status)}</span></div>')


def channel_table(state: CursorState) -> str:
    """Channel queues at the cursor: every message id and value, queued or reserved by whom."""
    rows = []
    names = list(state.channels) + [n for n in state.reserved if n not in state.channels]
    for name in names:
        held = state.reserved.get(name, ())
        queued = state.channels.get(name, ())
        for message in held:
            rows.append(f'<tr class="dx-reserved" data-channel="{escape(name)}">'
                        f"{_cell(name, 'dx-name')}{_cell(message.message_id)}"
                        f"{_cell(format_value(message.value))}"
                        f"{_cell(f'reserved by {message.execution_id}', 'dx-where')}</tr>")
        for position, waiting in enumerate(queued, start=1):
            rows.append(f'<tr class="dx-queued" data-channel="{escape(name)}">'
                        f"{_cell(name, 'dx-name')}{_cell(waiting.message_id)}"
                        f"{_cell(format_value(waiting.value))}"
                        f"{_cell(f'queued #{position}', 'dx-where')}</tr>")
        if not held and not queued:
            rows.append(f'<tr class="dx-none" data-channel="{escape(name)}">'
                        f'{_cell(name, "dx-name")}<td>—</td><td></td>'
                        f"{_cell('empty', 'dx-where')}</tr>")
    return _panel("Channels", _table(("Channel", "message", "value", "where"), rows,
                                     "no Channels"), "channels")


def attributes_table(state: CursorState) -> str:
    """Attribute values at the cursor."""
    rows = (f"<tr>{_cell(name, 'dx-name')}{_cell(format_value(value))}</tr>"
            for name, value in state.attributes.items())
    return _panel("Attributes", _table(("Attribute", "value"), rows, "no Attribute is set"),
                  "attributes")


def active_table(state: CursorState, holders: Mapping[str, str] | None = None) -> str:
    """The active executions at the cursor: Step, phase, attempt, since when, what they hold."""
    now = state.event.time_ns
    held = dict(holders or {})
    for name, messages in state.reserved.items():
        for message in messages:
            held.setdefault(message.execution_id, name)
    rows = []
    shown = _visible(state.active_executions, state.event.execution_id, held)
    for active in shown:
        attempt = f"{active.method} #{active.attempt}" if active.method else ""
        since = f"{(now - active.since_ns) / 1e9:.3f} s"
        selected = " dx-current" if active.execution_id == state.event.execution_id else ""
        rows.append(f'<tr class="dx-phase-{escape(active.phase)}{selected}">'
                    f"{_cell(active.execution_id, 'dx-name')}"
                    f"{_cell(_PHASE_TEXT.get(active.phase, active.phase))}{_cell(attempt)}"
                    f"{_cell(since, 'dx-time')}{_cell(held.get(active.execution_id, ''))}</tr>")
    total = len(state.active_executions)
    if total > len(shown):
        rows.append(f'<tr class="dx-more"><td colspan="5">… and {total - len(shown)} more '
                    "(queued or waiting)</td></tr>")
    title = f"Active executions ({total})"
    return _panel(title, _table(("execution", "phase", "attempt", "for", "holds"), rows,
                                "no execution is active"), "active")


def _visible(active: Sequence[ActiveExecution], current: str | None,
             held: Mapping[str, str]) -> list[ActiveExecution]:
    """At most ACTIVE_ROWS executions: the busy ones, holders and the current first."""
    if len(active) <= ACTIVE_ROWS:
        return list(active)
    def rank(a: ActiveExecution) -> int:
        if a.execution_id == current or a.execution_id in held:
            return 0
        return 1 if a.phase not in ("queued", "waiting") else 2
    chosen = sorted(range(len(active)), key=lambda i: (rank(active[i]), i))[:ACTIVE_ROWS]
    return [active[i] for i in sorted(chosen)]


def event_list(labels: Sequence[str], cursor: int, window: int = 8) -> str:
    """The events around the cursor (``window`` before and after), the cursor's marked."""
    start, stop = max(0, cursor - window), min(len(labels), cursor + window + 1)
    rows = (f'<tr class="{"dx-current" if i == cursor else ""}">{_cell(labels[i])}</tr>'
            for i in range(start, stop))
    return _panel(f"Events ({len(labels)})", _table(("event",), rows, "no events"), "events")


# ---------------------------------------------------------------- event detail


def _decision(decision: Mapping[str, Any]) -> str:
    kind = str(decision.get("kind", "?"))
    nexts = [n for n in decision.get("next") or () if isinstance(n, Mapping)]
    text = "go_to " + ", ".join(str(n.get("execution_id") or n.get("step_type")) for n in nexts) \
        if kind == "NEXT" else kind.lower()
    if decision.get("has_output"):
        text += f" with output {format_value(decision.get('output'))}"
    canceled = decision.get("canceled") or []
    if canceled:
        text += f"; canceled {', '.join(str(c) for c in canceled)}"
    if decision.get("reason"):
        text += f" ({decision['reason']})"
    return text


def _writes(writes: Iterable[Any]) -> str:
    parts = []
    for write in writes:
        if isinstance(write, Mapping):
            name = shown_name(str(write.get("attribute")))
            parts.append(f"{name} deleted" if write.get("deleted")
                         else f"{name} = {format_value(write.get('value'))}")
    return "; ".join(parts)


def _publications(event: Event, index: HistoryIndex) -> str:
    parts = []
    for message_id in event.payload.get("published") or ():
        info = index.message(event.run_id, str(message_id))
        parts.append(f"{message_id} → {shown_name(info.channel)} {format_value(info.value, 40)}"
                     if info else str(message_id))
    for message in event.payload.get("messages") or ():
        if isinstance(message, Mapping) and str(event.kind) == _K.CHANNEL_EXTERNAL_PUBLISH:
            parts.append(f"{message.get('message_id')} → {shown_name(str(message.get('channel')))} "
                         f"{format_value(message.get('value'), 40)}")
    return "; ".join(parts)


def _error(payload: Mapping[str, Any]) -> str:
    if not payload.get("error_type") and not payload.get("error_message"):
        return ""
    name = str(payload.get("error_type") or "").rsplit(".", 1)[-1]
    text = f"{name}: {payload.get('error_message') or ''}"
    if payload.get("retry_at_ns") is not None:
        text += f" (retry in {int(payload.get('retry_delay_ns') or 0) / 1e9:.3f} s)"
    elif "final" in payload:
        text += " (final)" if payload.get("final") else ""
    return text


def _message_line(payload: Mapping[str, Any]) -> str:
    who = payload.get("publisher") or payload.get("consumer") or payload.get("from")
    role = ("published by" if "publisher" in payload else "consumed by" if "consumer" in payload
            else "returned from")
    value = f" {format_value(payload['value'])}" if "value" in payload else ""
    channel = shown_name(str(payload.get("channel")))
    return f"{payload.get('message_id')} on {channel}{value} — {role} {who}"


def _input_rows(event: Event, index: HistoryIndex) -> list[tuple[str, str]]:
    if event.execution_id:
        known, value = index.input_of(event.run_id, event.execution_id)
        return [("input", format_value(value, 200))] if known else []
    if "input" in event.payload:
        return [("input", format_value(event.payload.get("input"), 200))]
    return []


def _what_rows(event: Event, index: HistoryIndex) -> list[tuple[str, str]]:
    payload, kind = event.payload, str(event.kind)
    rows = _input_rows(event, index)
    if event.method:
        rows.append(("method", f"{event.method} attempt {event.attempt or '?'}"))
    wait = payload.get("wait")
    if isinstance(wait, Mapping):
        labels = [condition_label(c) for c in wait.get("conditions") or ()
                  if isinstance(c, Mapping)]
        rows.append(("wait", f"{wait.get('kind')} {' & '.join(labels)}".strip()))
    if isinstance(payload.get("decision"), Mapping):
        rows.append(("decision", _decision(payload["decision"])))
    if kind in (_K.MESSAGE_PUBLISHED, _K.MESSAGE_CONSUMED, _K.MESSAGE_RETURNED):
        rows.append(("message", _message_line(payload)))
    if kind == _K.WAIT_SATISFIED:
        taken = ", ".join(f"{m.get('message_id')} ({shown_name(str(m.get('channel')))})"
                          for m in payload.get("messages") or () if isinstance(m, Mapping))
        rows.append(("took", taken or "no message"))
    return rows


_FACTS = (("from_execution_id", "created by"), ("reason", "reason"), ("by", "canceled by"),
          ("phase", "phase"), ("status", "status"), ("recovery_execution_id", "recovery"),
          ("rpc", "rpc"))


def _detail_rows(event: Event, index: HistoryIndex) -> list[tuple[str, str]]:
    payload = event.payload
    rows = _what_rows(event, index)
    for key, label in _FACTS:
        # An AttemptFailed "reason" (error/timeout) is part of the error line instead.
        if payload.get(key) not in (None, "", []) and not (key == "reason"
                                                           and "error_type" in payload):
            rows.append((label, str(payload[key])))
    rows += [(label, text) for label, text in (
        ("writes", _writes(payload.get("writes") or ())),
        ("publications", _publications(event, index)),
        ("error", _error(payload)),
        ("outputs", format_value(payload["outputs"], 200) if payload.get("outputs") else ""),
        ("output", format_value(payload["output"], 200) if "output" in payload else ""),
    ) if text]
    return rows


def event_detail(event: Event, index: HistoryIndex) -> str:
    """The selected event: its execution's input, decision, writes, publications, error."""
    rows = [f"<tr>{_cell(label, 'dx-name')}{_cell(text)}</tr>"
            for label, text in _detail_rows(event, index)]
    body = _table(("", ""), rows, "no details")
    raw = escape(json.dumps(dict(event.payload), indent=1, sort_keys=True, default=str,
                            ensure_ascii=False)[:4000])
    title = f"#{event.seq} {event.kind}" + (f" · {event.execution_id}"
                                            if event.execution_id else "")
    extra = f"<details><summary>payload</summary><pre>{raw}</pre></details>"
    return _panel(title, body + stack_trace(event) + extra, "detail")


def stack_trace(event: Event) -> str:
    """A failed attempt's stack trace as a collapsible block ("" when it has none)."""
    trace = event.payload.get("stack_trace")
    if not isinstance(trace, str) or not trace:
        return ""
    return (f'<details class="dx-trace" open><summary>stack trace</summary>'
            f"<pre>{escape(trace)}</pre></details>")
