"""dexviz.connect against a local gRPC stand-in serving recorded Dex pages."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("grpc", reason="the server extra (grpcio) is not installed")

import dexviz  # noqa: E402
from dexviz.history import HistoryFormatError  # noqa: E402
from dexviz.server import (  # noqa: E402
    DexFlowNotFoundError,
    DexHistoryPageError,
    DexServerError,
    DexServerTimeoutError,
    DexServerUnavailableError,
)
from tests.dex_support import RUN_2, RUN_ID, continue_as_new_chain, contract_edit_run  # noqa: E402
from tests.server.fake_dex import FakeDex  # noqa: E402


def _pages(run_events: list[dict[str, object]]) -> list[dict[str, object]]:
    """Three pages, the middle one empty (pages are cut over raw events)."""
    cut = len(run_events) // 2
    return [{"events": run_events[:cut]}, {"events": []}, {"events": run_events[cut:]}]


def _serve(fake: FakeDex, **flags: bool) -> None:
    run = contract_edit_run(**flags)
    fake.runs[RUN_ID] = _pages(run.events)
    fake.current = RUN_ID


def test_connect_reads_every_page_of_the_current_run(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    seen: list[tuple[int, int]] = []
    with dexviz.connect(fake_dex.address, timeout=5) as server:
        history = server.history("contract-7", progress=lambda p, e: seen.append((p, e)))
    expected = dexviz.from_dex(contract_edit_run().page())
    assert history.events == expected.events
    assert [r.get("nextPageToken", "") for r in fake_dex.requests] == ["", "MQ==", "Mg=="]
    assert all(r["runId"] == RUN_ID for r in fake_dex.requests)
    half = len(contract_edit_run().events) // 2
    assert seen == [(1, half), (2, half), (3, len(contract_edit_run().events))]
    assert history.source == f"Dex server {fake_dex.address}: Flow 'contract-7' run '{RUN_ID}'"


def test_server_history_feeds_the_overlap_check(fake_dex: FakeDex) -> None:
    _serve(fake_dex, extra_token=True)
    with dexviz.connect(fake_dex.address) as server:
        history = server.history("contract-7", RUN_ID, progress=False)
    report = dexviz.exclusive_sections(history, "contractEditToken")
    assert not report.ok
    assert report.overlaps[0].execution_ids == ("EnterContractEdit-3", "EnterContractEdit-1")


def test_unreachable_server_names_address_and_flow() -> None:
    with dexviz.connect("127.0.0.1:1", timeout=2) as server:
        with pytest.raises(DexServerUnavailableError) as caught:
            server.history("contract-7", "run-1", progress=False)
    message = str(caught.value)
    assert message.startswith("reading the history of run 'run-1' from the Dex server at "
                              "127.0.0.1:1 failed for Flow 'contract-7': the server cannot be "
                              "reached (")
    assert caught.value.address == "127.0.0.1:1"


def test_not_found_carries_the_dex_sub_status(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    with dexviz.connect(fake_dex.address) as server:
        with pytest.raises(DexFlowNotFoundError) as caught:
            server.history("contract-7", "no-such-run", progress=False)
    assert str(caught.value) == (
        f"reading the history of run 'no-such-run' from the Dex server at {fake_dex.address} "
        "failed for Flow 'contract-7': flow contract-7 run no-such-run not found")
    assert caught.value.sub_status is dexviz.ErrorSubStatus.FLOW_NOT_EXISTS
    assert isinstance(caught.value, dexviz.DexServiceError)


def test_unknown_flow_without_run_fails_at_the_summary(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    with dexviz.connect(fake_dex.address) as server, pytest.raises(DexFlowNotFoundError,
                                                                  match="Flow 'other'"):
        server.history("other", progress=False)


def test_timeout(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    fake_dex.fault = "slow"
    with dexviz.connect(fake_dex.address, timeout=0.3) as server:
        with pytest.raises(DexServerTimeoutError) as caught:
            server.history("contract-7", RUN_ID, progress=False)
    assert str(caught.value) == (
        f"reading the history of run '{RUN_ID}' from the Dex server at {fake_dex.address} "
        "failed for Flow 'contract-7': no answer within 0.3 s")


def test_repeating_page_token_is_an_error_not_a_loop(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    fake_dex.fault = "loop"
    with dexviz.connect(fake_dex.address) as server:
        with pytest.raises(DexHistoryPageError) as caught:
            server.history("contract-7", RUN_ID, progress=False)
    assert str(caught.value) == (
        f"reading the history of run '{RUN_ID}' from the Dex server at {fake_dex.address} "
        "failed for Flow 'contract-7': page 1 repeats the next-page token of an earlier page; "
        "the history would never end")
    assert isinstance(caught.value, HistoryFormatError)
    assert len(fake_dex.requests) == 2


def test_bad_page_names_the_page(fake_dex: FakeDex) -> None:
    _serve(fake_dex)
    fake_dex.fault = "garbage"
    with dexviz.connect(fake_dex.address) as server:
        with pytest.raises(DexHistoryPageError) as caught:
            server.history("contract-7", RUN_ID, progress=False)
    assert str(caught.value) == (
        f"reading the history of run '{RUN_ID}' from the Dex server at {fake_dex.address} "
        "failed for Flow 'contract-7': page 1 is not a GetHistoryEventsResponse: "
        "truncated or overlong varint")


def test_malformed_event_in_a_page_names_server_page_and_event(fake_dex: FakeDex) -> None:
    run = contract_edit_run()
    run.events[3]["payload"]["context"]["stepExecutionId"] = ""
    fake_dex.runs[RUN_ID] = _pages(run.events)
    with dexviz.connect(fake_dex.address) as server:
        with pytest.raises(HistoryFormatError) as caught:
            server.history("contract-7", RUN_ID, progress=False)
    assert str(caught.value).endswith(
        f"Dex server {fake_dex.address}: Flow 'contract-7' run '{RUN_ID}': event 3 (page 0) "
        "(StepWaitForCompleted, eventId 10): payload.context.stepExecutionId is missing")


def test_errors_pickle_with_their_fields() -> None:
    error = DexServerTimeoutError("h:1", "f", "slow", run_id="r")
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.address) == (type(error), str(error), "h:1")
    assert isinstance(again, DexServerError)


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout must be more than 0 seconds"):
        dexviz.connect("127.0.0.1:1", timeout=0)


def test_all_runs_follows_the_continue_as_new_chain(fake_dex: FakeDex) -> None:
    first, second = continue_as_new_chain()
    fake_dex.runs = {RUN_ID: [first], RUN_2: [second]}
    fake_dex.current, fake_dex.first = RUN_2, RUN_ID
    with dexviz.connect(fake_dex.address) as server:
        chain = server.history("contract-7", all_runs=True, progress=False)
        current = server.history("contract-7", progress=False)
    assert chain.run_ids == (RUN_ID, RUN_2)
    assert chain.events == dexviz.from_dex([first, second]).events
    assert current.run_ids == (RUN_2,)


def test_progress_true_draws_a_notebook_bar(fake_dex: FakeDex,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from dexviz.server import progress

    drawn: list[tuple[int, str]] = []

    class Bar:
        def __init__(self, total: int | None) -> None:
            drawn.append((0, f"total={total}"))

        def update(self, value: int, text: str) -> None:
            drawn.append((value, text))

        def close(self, value: int) -> None:
            drawn.append((value, "closed"))

    monkeypatch.setattr("dexviz.widgets.progress.ProgressBar", Bar)
    _serve(fake_dex)
    with dexviz.connect(fake_dex.address) as server:
        history = server.history("contract-7", RUN_ID, progress=True)
    size = len(contract_edit_run().events)
    assert drawn[0] == (0, "total=None") and drawn[-1] == (size, "closed")
    assert drawn[-2] == (size, f"Flow contract-7: {size} events in 3 pages")
    assert progress.make_progress(None, "x") is None  # not in a notebook: no bar
    assert len(history) == 59
