"""The replay's list of failed attempts: each error, whether it was final, and its stack trace.

Read straight from the ``AttemptFailed`` events of the history (``error_type``,
``error_message``, ``reason``, ``final``, ``retry_delay_ns``, and the formatted traceback when
the engine recorded one), so a bug report shows every failure without stepping to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from dexviz.history import Event, EventKind, History

__all__ = ["TRACE_KEYS", "failed_attempts", "stack_trace"]

TRACE_KEYS: tuple[str, ...] = ("stack_trace", "traceback")
"""Payload keys of an ``AttemptFailed`` event that may hold the formatted stack trace."""


def stack_trace(payload: Mapping[str, Any]) -> str:
    """The failed attempt's formatted stack trace, or "" when none was recorded."""
    for key in TRACE_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _outcome(payload: Mapping[str, Any]) -> str:
    if payload.get("final"):
        return "final"
    delay = payload.get("retry_delay_ns")
    if isinstance(delay, int | float):
        return f"retry in {delay / 1e9:.3f} s"
    return str(payload.get("reason") or "")


def _row(index: int, event: Event) -> str:
    payload = event.payload
    error = str(payload.get("error_type") or "").rsplit(".", 1)[-1] or "error"
    message = str(payload.get("error_message") or "")
    who = f"{event.execution_id or event.step_type or 'flow'} {event.method or ''}".strip()
    attempt = f" attempt {event.attempt}" if event.attempt else ""
    trace = stack_trace(payload)
    details = (f'<details class="dx-trace"><summary>stack trace</summary>'
               f"<pre>{escape(trace)}</pre></details>") if trace else ""
    return (f'<li class="dx-failure" data-i="{index}"><a class="dx-goto" href="#event-{index}">'
            f"#{event.seq}</a> <b>{escape(who)}{escape(attempt)}</b> "
            f'<span class="dx-error">{escape(error)}: {escape(message)}</span> '
            f'<span class="dx-outcome">({escape(_outcome(payload))})</span>{details}</li>')


def failed_attempts(history: History) -> str:
    """The panel listing every failed attempt of ``history``, each linked to its event."""
    rows = [_row(index, event) for index, event in enumerate(history)
            if str(event.kind) == EventKind.ATTEMPT_FAILED]
    body = (f'<ol class="dx-failures">{"".join(rows)}</ol>' if rows
            else '<p class="dx-empty">no attempt failed</p>')
    return (f'<div class="dx-panel dx-failed"><div class="dx-title">Failed attempts '
            f"({len(rows)})</div>{body}</div>")
