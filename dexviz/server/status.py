"""The Dex detail of a failed gRPC call: ``grpc-status-details-bin`` → ``ServiceErrorResponse``."""

from __future__ import annotations

import base64
from typing import Any

from dexviz.sdk.errors import ErrorSubStatus
from dexviz.server.wire import WireError, decode

__all__ = ["SERVICE_ERROR_TYPE_URL", "sub_status_of"]

SERVICE_ERROR_TYPE_URL = "type.googleapis.com/dex.ServiceErrorResponse"
"""The type URL of the ``google.rpc.Status`` detail a Dex server attaches to its errors."""

_SUB_STATUS = (
    None, ErrorSubStatus.UNCATEGORIZED, ErrorSubStatus.FLOW_ALREADY_STARTED,
    ErrorSubStatus.FLOW_NOT_EXISTS, ErrorSubStatus.WORKER_API_ERROR,
    ErrorSubStatus.LONG_POLL_TIMEOUT, ErrorSubStatus.CHANNEL_MESSAGE_NOT_FOUND,
    ErrorSubStatus.REQUEST_TIMEOUT, ErrorSubStatus.FLOW_CLOSING,
)  # fmt: skip


def sub_status_of(error: Any) -> ErrorSubStatus | None:
    """The ``sub_status`` of the ServiceErrorResponse in a failed call's trailers, if any."""
    trailers = getattr(error, "trailing_metadata", lambda: None)() or ()
    for key, value in trailers:
        if key != "grpc-status-details-bin":
            continue
        try:
            status = decode(bytes(value), "google.rpc.Status")
            for detail in status.get("details", []):
                if detail.get("typeUrl") == SERVICE_ERROR_TYPE_URL:
                    response = decode(base64.b64decode(detail.get("value", "")),
                                      "ServiceErrorResponse")
                    number = int(response.get("subStatus", 0))
                    return _SUB_STATUS[number] if 0 < number < len(_SUB_STATUS) else None
        except (WireError, ValueError):
            return None
    return None
