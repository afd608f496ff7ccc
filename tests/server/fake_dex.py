"""A Dex server stand-in on 127.0.0.1 that answers with recorded history pages.

It serves ``dex.FlowService/GetHistoryEvents`` and ``GetFlowSummary`` from Dex Web pages (see
tests/dex_support.py), encoded with dexviz's own codec, and can misbehave on purpose: a slow
answer, a repeating page token, a page that is not protobuf.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from dexviz.server.schema import HISTORY_PAYLOADS
from dexviz.server.status import SERVICE_ERROR_TYPE_URL
from dexviz.server.wire import decode, encode

_PAYLOAD_KEY = {type_name: key for key, type_name in HISTORY_PAYLOADS.values()}


def encode_page(page: dict[str, Any], token: bytes) -> bytes:
    """A Dex Web page as GetHistoryEventsResponse bytes with ``token`` as its next token."""
    events = []
    for event in page["events"]:
        message = {"eventId": str(event["eventId"]), "eventTime": event["eventTime"]}
        if event["type"] in _PAYLOAD_KEY:
            message[_PAYLOAD_KEY[event["type"]]] = event["payload"]
        events.append(message)
    return encode({"events": events, "nextPageToken": base64.b64encode(token).decode(),
                   "nextInternalEventId": str(page.get("nextInternalEventId", 0))},
                  "GetHistoryEventsResponse")


def _not_found(context: Any, detail: str) -> None:
    error = encode({"detail": detail, "subStatus": 3}, "ServiceErrorResponse")
    status = encode({"code": 5, "message": detail, "details": [
        {"typeUrl": SERVICE_ERROR_TYPE_URL, "value": base64.b64encode(error).decode()}]},
        "google.rpc.Status")
    context.set_trailing_metadata((("grpc-status-details-bin", status),))
    context.abort(grpc.StatusCode.NOT_FOUND, detail)


@dataclass
class FakeDex:
    """What the stand-in serves: runs of pages, the current run, and a fault to inject."""

    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    flow_id: str = "contract-7"
    current: str = ""
    first: str = ""
    fault: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    address: str = ""

    def history(self, request: bytes, context: Any) -> bytes:
        asked = decode(request, "GetHistoryEventsRequest")
        self.requests.append(asked)
        if self.fault == "slow":
            time.sleep(1.5)
        pages = self.runs.get(asked.get("runId", ""))
        if asked.get("flowId") != self.flow_id or pages is None:
            _not_found(context, f"flow {asked.get('flowId')} run {asked.get('runId')} not found")
        token = base64.b64decode(asked.get("nextPageToken", ""))
        number = int(token or b"0")
        if self.fault == "garbage" and number == 1:
            return b"\x0a\xff\xff"
        following = b"" if number + 1 == len(pages) else str(number + 1).encode()
        if self.fault == "loop" and number >= 1:
            following = b"1"
        return encode_page(pages[number], following)

    def summary(self, request: bytes, context: Any) -> bytes:
        asked = decode(request, "GetFlowSummaryRequest")
        if asked.get("flowId") != self.flow_id:
            _not_found(context, f"flow {asked.get('flowId')} not found")
        run_id = asked.get("runId") or self.current
        return encode({"flowExecutionId": {"flowId": self.flow_id, "runId": run_id},
                       "firstRunId": self.first or run_id, "flowType": "ContractEditFlow"},
                      "GetFlowSummaryResponse")


@pytest.fixture
def fake_dex() -> Iterator[FakeDex]:
    """A started stand-in on 127.0.0.1 (a free port); it is always stopped afterwards."""
    fake = FakeDex()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handlers = {
        "GetHistoryEvents": grpc.unary_unary_rpc_method_handler(fake.history),
        "GetFlowSummary": grpc.unary_unary_rpc_method_handler(fake.summary),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "dex.FlowService", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    fake.address = f"127.0.0.1:{port}"
    try:
        yield fake
    finally:
        server.stop(grace=None).wait(5)
