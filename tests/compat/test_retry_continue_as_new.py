"""Retries before a continue-as-new stay visible (issue 25, item 7), as a Dex application.

``tests/compat/apps/quote_retry_v123.py`` imports ``dex``: its start Step's external call fails
three times and is retried with exponential backoff, while the run continues as new (the client
asks, or the Flow's threshold is passed). After the switch, ``wait_for_step_completion`` on the
retried execution returns, the execution's state says which attempt served it, and the history
views of the Flow's last run (execution records, the ``attempts`` table, the execution graph)
still list all four attempts with their 1x, 2x and 4x backoff. Live mode runs it through a compat
Worker and Client; a simulation runs the same Flow object on an Engine's virtual clock, with
Dex's 3 s first interval.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dexviz import Engine, FlowStatus, History, execution_graph, frames
from dexviz.analysis.executions import as_run
from dexviz.compat import engine_for
from tests.compat.helpers import load_app

FIRST = {"simulation": timedelta(seconds=3), "live": timedelta(seconds=1)}
"""The first backoff: 3 s (3, 6, 12 s) on a virtual clock; Dex's whole-second minimum, 1 s
(7 s in all), on the wall clock."""
TIMEOUT = timedelta(minutes=1)
THRESHOLD = 4
"""Events of a run before it continues as new: passed while the first attempts fail."""


@dataclass(frozen=True)
class Seen:
    """What the application and the history views saw of the retried execution."""

    result_status: FlowStatus
    output: str
    served_on: int
    runs: int
    first_run_changed: bool
    attempts: list[tuple[str, int, str]]
    delays_ns: list[int]
    table_attempts: list[int]
    graph_node: str


@contextmanager
def client_in(mode: str, flow: Any, tmp_path: Path) -> Iterator[Any]:
    """A Dex Client for ``flow``: through compat on the live engine, or a simulation's."""
    if mode == "simulation":
        engine = Engine([flow], mode="simulation")
        try:
            client = engine.client()
            client.history = engine.history  # type: ignore[attr-defined]
            yield client
        finally:
            engine.close()
        return
    import dex

    registry = dex.Registry([flow])
    cache = dex.open_blob_cache(dex.BlobCacheConfig(str(tmp_path), 1 << 20))
    address = f"inproc:quotes-{id(flow)}"
    worker = dex.Worker(registry, cache, dex.WorkerOptions(server_address=address))
    thread = threading.Thread(target=worker.start, name="quotes-worker")
    thread.start()
    client = dex.Client(registry, cache, dex.ClientOptions(address))
    try:
        client.history = engine_for(address).history  # type: ignore[attr-defined]
        yield client
    finally:
        client.close()
        worker.close()
        thread.join(5)
        cache.close()


def run_quote(client: Any, app: ModuleType, flow: Any, method: str, trigger: str) -> Seen:
    """Start, continue as new during the retries, then settle; what was seen at the end."""
    app.CALLS.clear()
    options = app.start_options(THRESHOLD if trigger == "threshold" else None)
    client.start_flow(flow, "q-1", "ACME", options)
    first_run = client.describe_flow("q-1").run_id
    if trigger == "client":
        client.trigger_continue_as_new("q-1")  # while the first attempt fails
    client.wait_for_attribute_equal("q-1", app.served_on, app.DOWN_FOR + 1, TIMEOUT)
    changed = client.describe_flow("q-1").run_id != first_run
    client.publish("q-1", app.settle, "settled")
    client.wait_for_step_completion("q-1", "FetchQuote-1", TIMEOUT)
    result = client.wait_for_flow("q-1", TIMEOUT)
    history: History = client.history("q-1")
    fetch = as_run(history)["FetchQuote-1"].attempts_of(method)
    table = frames(history).attempts
    rows = table[(table["execution_id"] == "FetchQuote-1") & (table["method"] == method)]
    return Seen(
        result.status,
        result.single_output(str),
        client.get_attribute("q-1", app.served_on),
        len(history.run_ids),
        changed,
        [(a.method, a.number, str(a.outcome)) for a in fetch],
        [a.retry_delay_ns for a in fetch if a.retry_delay_ns is not None],
        list(rows["attempt"]),
        node_text(execution_graph(history, collapse_at=None).to_dot(), "FetchQuote-1"),
    )


def node_text(dot: str, node: str) -> str:
    """The text of one node's DOT statement, markup stripped."""
    start = dot.index(f'"{node}" [')
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", dot[start : dot.index("];", start)]))


VARIANTS = [
    ("simulation", "execute", "client"),
    ("simulation", "execute", "threshold"),
    ("simulation", "wait_for", "client"),
    ("simulation", "wait_for", "threshold"),
    # Live mode sleeps through the backoff: two variants cover both methods and both triggers.
    ("live", "execute", "client"),
    ("live", "wait_for", "threshold"),
]


@pytest.mark.parametrize(("mode", "method", "trigger"), VARIANTS)
def test_retries_before_a_continue_as_new_stay_visible_to_callers_and_views(
    dex: ModuleType, tmp_path: Path, mode: str, method: str, trigger: str
) -> None:
    pytest.importorskip("pandas")
    app = load_app("quote_retry_v123")
    flow = app.QuoteFlow(FIRST[mode], in_wait_for=method == "wait_for")
    with client_in(mode, flow, tmp_path) as client:
        seen = run_quote(client, app, flow, method, trigger)
    first = int(FIRST[mode].total_seconds() * 1e9)
    assert seen.result_status is FlowStatus.COMPLETED and seen.output == "ACME settled"
    assert app.CALLS == [1, 2, 3, 4] and seen.served_on == 4
    assert seen.runs >= 2 and seen.first_run_changed
    failed = [(method, n, "failed") for n in (1, 2, 3)]
    assert seen.attempts == [*failed, (method, 4, "completed")]
    assert seen.delays_ns == [first, 2 * first, 4 * first]
    assert seen.table_attempts == [1, 2, 3, 4]
    assert "3 failed attempts" in seen.graph_node and "Completed" in seen.graph_node


def test_a_caller_waiting_from_before_the_continue_as_new_sees_the_step_complete(
    dex: ModuleType, tmp_path: Path
) -> None:
    """Live: ``wait_for_step_completion`` called before the switch returns after it."""
    app = load_app("quote_retry_v123")
    flow = app.QuoteFlow(FIRST["live"], in_wait_for=False)
    with client_in("live", flow, tmp_path) as client:
        app.CALLS.clear()
        client.start_flow(flow, "q-1", "ACME")
        first_run = client.describe_flow("q-1").run_id
        waited: list[str] = []
        waiter = threading.Thread(
            target=lambda: waited.append(
                str(client.wait_for_step_completion("q-1", "FetchQuote-1", TIMEOUT))
            )
        )
        waiter.start()
        client.trigger_continue_as_new("q-1")
        waiter.join(TIMEOUT.total_seconds())
        assert waited == ["None"] and app.CALLS == [1, 2, 3, 4]
        assert client.describe_flow("q-1").run_id != first_run
        client.publish("q-1", app.settle, "settled")
        assert client.wait_for_flow("q-1", TIMEOUT).single_output(str) == "ACME settled"
