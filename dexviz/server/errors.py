"""Errors of reading a history from a Dex server: each names the server's address and the Flow."""

from __future__ import annotations

from typing import Any

from dexviz.history import HistoryFormatError
from dexviz.sdk.errors import DexServiceError, ErrorSubStatus, StatusCode

__all__ = [
    "DexFlowNotFoundError", "DexHistoryPageError", "DexServerError", "DexServerTimeoutError",
    "DexServerUnavailableError", "ServerExtraMissingError",
]  # fmt: skip


class ServerExtraMissingError(ImportError):
    """grpcio or protobuf is not installed: ``pip install dexviz[server]``."""


class DexServerError(DexServiceError):
    """A Dex server answered a history read with an error (or did not answer).

    Attributes:
        address: The server's ``host:port``.
        run_id: The run asked for, if any.
    """

    def __init__(self, address: str, flow_id: str, detail: str, *,
                 code: StatusCode | None = None, run_id: str | None = None,
                 sub_status: ErrorSubStatus | None = None) -> None:
        run = f" run {run_id!r}" if run_id else ""
        super().__init__(
            code if code is not None else StatusCode.UNKNOWN,
            sub_status if sub_status is not None else ErrorSubStatus.UNCATEGORIZED,
            detail, f"reading the history of{run} from the Dex server at {address}", flow_id)
        self.address = address
        self.run_id = run_id

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle through the constructor arguments."""
        return (_rebuild, (type(self), self.address, self.flow_id, self.detail, self.code,
                           self.run_id, self.sub_status))


def _rebuild(cls: type[DexServerError], address: str, flow_id: str, detail: str,
             code: StatusCode, run_id: str | None,
             sub_status: ErrorSubStatus) -> DexServerError:
    return cls(address, flow_id, detail, code=code, run_id=run_id, sub_status=sub_status)


class DexServerUnavailableError(DexServerError):
    """The server cannot be reached (gRPC ``UNAVAILABLE``)."""


class DexFlowNotFoundError(DexServerError):
    """The server has no such Flow or run (gRPC ``NOT_FOUND``)."""


class DexServerTimeoutError(DexServerError):
    """A call took longer than the timeout (gRPC ``DEADLINE_EXCEEDED``)."""


class DexHistoryPageError(DexServerError, HistoryFormatError):
    """A page the server sent cannot be read, or its next-page token repeats an earlier one."""
