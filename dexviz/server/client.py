"""``dexviz.connect``: read a run's history from a Dex server over gRPC.

The client speaks ``dex.FlowService`` with the message definitions of
:mod:`dexviz.server.schema` and the codec of :mod:`dexviz.server.wire` (no generated code).
``GetHistoryEvents`` needs a run id, so without one the Flow's current run is asked first with
``GetFlowSummary``, as dexcli does. Pages are followed until the server sends an empty token.
"""

from __future__ import annotations

import base64
import importlib
from collections.abc import Callable, Iterator
from types import ModuleType, TracebackType
from typing import Any

from dexviz.history.dex_history import DexHistory, from_dex_document
from dexviz.history.dex_json import read_dex
from dexviz.server.errors import (
    DexFlowNotFoundError,
    DexHistoryPageError,
    DexServerError,
    DexServerTimeoutError,
    DexServerUnavailableError,
    ServerExtraMissingError,
)
from dexviz.server.progress import Progress, make_progress
from dexviz.server.status import sub_status_of
from dexviz.server.wire import (
    WireError,
    decode,
    encode,
    history_event,
    raw_fields,
)

__all__ = ["PAGE_SIZE", "DexServer", "connect"]

PAGE_SIZE = 200
"""Raw events asked for per page (Dex Web's choice; 0 would be the server's 100)."""

_SERVICE = "/dex.FlowService/"
_ERRORS: dict[str, type[DexServerError]] = {
    "UNAVAILABLE": DexServerUnavailableError, "NOT_FOUND": DexFlowNotFoundError,
    "DEADLINE_EXCEEDED": DexServerTimeoutError,
}  # fmt: skip


def _grpc() -> ModuleType:
    try:
        return importlib.import_module("grpc")
    except ImportError:
        raise ServerExtraMissingError(
            "reading from a Dex server needs grpcio and protobuf: pip install 'dexviz[server]'"
        ) from None


def _raw(data: bytes) -> bytes:
    return data


class DexServer:
    """A connection to one Dex server (use it as a context manager, or call ``close``).

    Attributes:
        address: The server's ``host:port``.
        timeout: Seconds each call may take.
    """

    def __init__(self, address: str, *, timeout: float = 10.0) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be more than 0 seconds, not {timeout!r}")
        grpc = _grpc()
        self.address = address
        self.timeout = timeout
        self._grpc = grpc
        self._channel: Any = grpc.insecure_channel(address)

    def __enter__(self) -> DexServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DexServer(address={self.address!r}, timeout={self.timeout})"

    def close(self) -> None:
        """Close the connection."""
        self._channel.close()

    def _call(self, method: str, request: bytes, flow_id: str, run_id: str | None) -> bytes:
        call = self._channel.unary_unary(_SERVICE + method, request_serializer=_raw,
                                         response_deserializer=_raw)
        try:
            return bytes(call(request, timeout=self.timeout))
        except self._grpc.RpcError as error:
            raise self._error(error, flow_id, run_id) from None

    def _error(self, error: Any, flow_id: str, run_id: str | None) -> DexServerError:
        code = error.code()
        detail = error.details() or code.name
        if code.name == "DEADLINE_EXCEEDED":
            detail = f"no answer within {self.timeout:g} s"
        elif code.name == "UNAVAILABLE":
            detail = f"the server cannot be reached ({detail})"
        cls = _ERRORS.get(code.name, DexServerError)
        return cls(self.address, flow_id, detail, code=code, run_id=run_id,
                   sub_status=sub_status_of(error))

    def summary(self, flow_id: str, run_id: str = "") -> dict[str, Any]:
        """``GetFlowSummary``: the run (the current one for an empty ``run_id``), as JSON."""
        request = encode({"flowId": flow_id, "runId": run_id}, "GetFlowSummaryRequest")
        data = self._call("GetFlowSummary", request, flow_id, run_id or None)
        try:
            return decode(data, "GetFlowSummaryResponse")
        except WireError as error:
            raise DexHistoryPageError(self.address, flow_id,
                                      f"the GetFlowSummary answer is not readable: {error}",
                                      run_id=run_id or None) from None

    def current_run(self, flow_id: str) -> str:
        """The id of the Flow's current (latest) run."""
        run_id = self.summary(flow_id).get("flowExecutionId", {}).get("runId", "")
        if not run_id:
            raise DexHistoryPageError(self.address, flow_id,
                                      "GetFlowSummary named no current run")
        return str(run_id)

    def pages(self, flow_id: str, run_id: str,
              progress: Progress | None = None) -> Iterator[dict[str, Any]]:
        """Every page of one run's history, as Dex Web pages, in order.

        Raises:
            DexHistoryPageError: a page cannot be decoded, or a token repeats (a loop).
        """
        token, seen, number, events = "", set(), 0, 0
        while True:
            request = encode({"flowId": flow_id, "runId": run_id,
                              "estimatePageSize": PAGE_SIZE, "nextPageToken": token},
                             "GetHistoryEventsRequest")
            data = self._call("GetHistoryEvents", request, flow_id, run_id)
            page = self._page(data, flow_id, run_id, number)
            events += len(page["events"])
            if progress is not None:
                progress.update(number + 1, events)
            yield page
            token = page["nextPageToken"]
            if not token:
                return
            if token in seen:
                raise DexHistoryPageError(
                    self.address, flow_id, f"page {number} repeats the next-page token of an "
                    "earlier page; the history would never end", run_id=run_id)
            seen.add(token)
            number += 1

    def _page(self, data: bytes, flow_id: str, run_id: str, number: int) -> dict[str, Any]:
        try:
            page: dict[str, Any] = {"events": [], "nextPageToken": "",
                                    "nextInternalEventId": 0}
            for field, wire, raw in raw_fields(data):
                if field == 1 and wire == 2:
                    page["events"].append(history_event(bytes(raw)))
                elif field == 2 and wire == 2:
                    page["nextPageToken"] = base64.b64encode(bytes(raw)).decode("ascii")
                elif field == 3 and wire == 0:
                    page["nextInternalEventId"] = raw
            return page
        except (WireError, ValueError) as error:
            raise DexHistoryPageError(self.address, flow_id, f"page {number} is not a "
                                      f"GetHistoryEventsResponse: {error}",
                                      run_id=run_id) from None

    def history(self, flow_id: str, run_id: str | None = None, *, all_runs: bool = False,
                progress: bool | Callable[[int, int], None] | None = None) -> DexHistory:
        """Read one run's history (the current run by default) into a History.

        Args:
            flow_id: The Flow id.
            run_id: The run; None asks the server for the Flow's current run.
            all_runs: Read the whole continue-as-new chain up to ``run_id`` (or the current
                run), from the summary's ``first_run_id``, following ``continuedToRunId``.
            progress: A progress bar (True), none (False), a callable given (pages, events)
                after each page, or None: a bar in a notebook, none elsewhere.

        Raises:
            DexServerError: one of its subclasses for an unreachable server, an unknown Flow
                or run, a timeout, or a page that cannot be read; the message names the
                address and the Flow.
        """
        run_id = run_id or self.current_run(flow_id)
        runs = self._chain(flow_id, run_id) if all_runs else [run_id]
        bar = make_progress(progress, f"Flow {flow_id}")
        pages: list[dict[str, Any]] = []
        try:
            for run in runs:
                pages.extend(self.pages(flow_id, run, bar))
        finally:
            if bar is not None:
                bar.close()
        source = f"Dex server {self.address}: Flow {flow_id!r} run {run_id!r}"
        try:
            return from_dex_document(read_dex(pages, name=source), flow_id=flow_id)
        except DexServerError:
            raise
        except ValueError as error:
            raise DexHistoryPageError(self.address, flow_id, str(error),
                                      run_id=run_id) from None

    def _chain(self, flow_id: str, run_id: str) -> list[str]:
        first = str(self.summary(flow_id, run_id).get("firstRunId") or run_id)
        chain = [first]
        while chain[-1] != run_id and len(chain) < 10_000:
            closing = [e for page in self.pages(flow_id, chain[-1]) for e in page["events"]
                       if e["type"] == "FlowClosed"]
            following = (closing[-1]["payload"] or {}).get("continuedToRunId") if closing else ""
            if not following:
                break
            chain.append(str(following))
        return chain


def connect(address: str, *, timeout: float = 10.0) -> DexServer:
    """Connect to the Dex server at ``address`` (``host:port``); use it in a ``with`` block.

    ``with dexviz.connect("localhost:7233") as server: history = server.history("order-1")``

    Raises:
        ServerExtraMissingError: grpcio is not installed (``pip install dexviz[server]``).
    """
    return DexServer(address, timeout=timeout)
