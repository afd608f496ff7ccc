"""The Stream store: per Flow id and Stream, an ordered, capacity-bounded log (R180, R181)."""

from __future__ import annotations

import json
from collections import deque
from datetime import UTC, datetime
from typing import Any

from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.stream import Stream, StreamMessage, StreamMessagesPage


class StreamLog:
    """One Stream of one Flow id: messages numbered from 1, oldest dropped past capacity."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity = capacity_bytes
        self.messages: deque[tuple[int, int, StreamMessage[Any]]] = deque()
        self.size = 0
        self.written = 0

    def append(self, value: Any, source: str, now_ns: int) -> StreamMessage[Any]:
        """Add a message; trim the oldest ones beyond the capacity (always keep the newest)."""
        self.written += 1
        created = datetime.fromtimestamp(now_ns / 1e9, tz=UTC)
        message = StreamMessage(value, str(self.written), created, source)
        size = len(json.dumps(to_json_ready(value))) + len(source) + 32
        self.messages.append((self.written, size, message))
        self.size += size
        while self.size > self.capacity and len(self.messages) > 1:
            _, dropped, _ = self.messages.popleft()
            self.size -= dropped
        return message

    def after(self, token: str) -> StreamMessage[Any] | None:
        """The first retained message after ``token`` (an empty or trimmed token: the oldest)."""
        number = int(token) if token.isdigit() else 0
        for index, _, message in self.messages:
            if index > number:
                return message
        return None

    def page(self, size: int, before: str) -> StreamMessagesPage:
        """Up to ``size`` messages before ``before`` (all when empty), newest first."""
        limit = int(before) if before.isdigit() else self.written + 1
        older = [(i, m) for i, _, m in reversed(self.messages) if i < limit][:size]
        following = str(older[-1][0]) if len(older) == size and older[-1][0] > self._first() else ""
        return StreamMessagesPage(tuple(m for _, m in older), following)

    def _first(self) -> int:
        return self.messages[0][0] if self.messages else 0


class StreamStore:
    """Every Stream log of an engine, keyed by (Flow id, Stream name)."""

    def __init__(self) -> None:
        self._logs: dict[tuple[str, str], StreamLog] = {}

    def log(self, flow_id: str, stream: Stream[Any]) -> StreamLog:
        """The log of ``stream`` for ``flow_id``, created on first use."""
        key = (flow_id, stream.name)
        found = self._logs.get(key)
        if found is None:
            found = self._logs[key] = StreamLog(stream.stream_capacity_bytes)
        return found
