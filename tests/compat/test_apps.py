"""End to end: Dex applications, unchanged, on the live in-process engine through compat.

Each application module imports ``dex`` exactly as it would with dex-python-sdk installed and
wires a Worker (on a thread or as a task) and a Client on an ``inproc:`` server address.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import ModuleType

import pytest

from dexviz import EventKind, FlowErrorType, FlowStatus
from dexviz.compat import HUB, NoWorkerError, engine_for, server_addresses
from tests.compat.helpers import load_app

THREAD_PREFIX = "dexviz-"


def dexviz_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX))


def test_v123_app_runs_order_through_retry_fan_out_rpc_and_channel(
    dex: ModuleType, tmp_path: Path
) -> None:
    orders = load_app("orders_v123")
    app = orders.OrderApp("inproc:orders", str(tmp_path / "cache"))
    try:
        assert app.lookup("order-1") is None  # FlowNotFoundError from dex.runtime_errors
        run_id = app.place("order-1", orders.Order("sku-9", 4))
        assert isinstance(run_id, str) and run_id
        app.wait_until_awaiting("order-1")
        assert app.status("order-1") == "validated"
        assert app.approve("order-1", "ada") == "approval by ada queued"
        result = app.outcome("order-1")
        assert result.status is FlowStatus.COMPLETED
        assert result.single_output(str) == "shipped: sku-9 approved by ada"
        assert app.client.get_attribute("order-1", orders.reserved) == 4
        assert app.lookup("order-1") == "completed"
        assert orders.INVENTORY_ATTEMPTS[-2:] == [1, 2]  # retry_after, then success

        history = engine_for("inproc:orders").history("order-1")
        kinds = {event.kind for event in history}
        assert EventKind.FLOW_CLOSED in kinds
        steps = {event.step_type for event in history if event.step_type}
        assert {"Validate", "Reserve", "AwaitApproval", "Ship"} <= steps
    finally:
        app.close()
    assert server_addresses() == ()


def test_v123_app_expired_approval_fails_the_order(dex: ModuleType, tmp_path: Path) -> None:
    orders = load_app("orders_v123")
    app = orders.OrderApp("inproc:expiry", str(tmp_path / "cache"))
    try:
        app.place("order-2", orders.Order("sku-1", 1))
        app.wait_until_awaiting("order-2")
        app.expire_now("order-2")
        result = app.outcome("order-2")
        assert result.status is FlowStatus.FAILED
        assert result.error_type is FlowErrorType.STEP_DECISION_FAILED
        assert "approval of sku-1 expired" in (result.error_message or "")
    finally:
        app.close()


def test_v02_app_with_worker_thread_and_client(dex: ModuleType, tmp_path: Path) -> None:
    signals = load_app("signals_v02")
    output, counter = signals.run_threaded("inproc:signals", str(tmp_path), "sig-1")
    assert output == "batch-7:a,b,c"
    assert counter == 3
    assert HUB.held() == {}


def test_v02_app_with_async_worker_task_and_async_client(dex: ModuleType, tmp_path: Path) -> None:
    signals = load_app("signals_v02")
    output, counter = asyncio.run(signals.run_async("inproc:signals-async", str(tmp_path), "s-2"))
    assert output == "async:x,y"
    assert counter == 2
    assert HUB.held() == {}


def test_two_apps_on_different_addresses_do_not_share_an_engine(
    dex: ModuleType, tmp_path: Path
) -> None:
    orders = load_app("orders_v123")
    first = orders.OrderApp("inproc:one", str(tmp_path / "a"))
    second = orders.OrderApp("inproc:two", str(tmp_path / "b"))
    try:
        first.place("same-id", orders.Order("a", 1))
        assert second.lookup("same-id") is None
        assert engine_for("inproc:one") is not engine_for("inproc:two")
    finally:
        first.close()
        second.close()
    with pytest.raises(NoWorkerError):
        engine_for("inproc:one")


def test_no_dexviz_thread_outlives_the_last_close(dex: ModuleType, tmp_path: Path) -> None:
    before = set(threading.enumerate())
    orders = load_app("orders_v123")
    app = orders.OrderApp("inproc:threads", str(tmp_path / "cache"))
    app.place("order-t", orders.Order("sku", 1))
    app.wait_until_awaiting("order-t")
    app.approve("order-t", "bob")
    assert app.outcome("order-t").status is FlowStatus.COMPLETED
    assert dexviz_threads(), "the live engine runs on dexviz- threads while open"
    app.close()
    signals = load_app("signals_v02")
    signals.run_threaded("inproc:threads-2", str(tmp_path), "sig-t")
    asyncio.run(signals.run_async("inproc:threads-3", str(tmp_path), "sig-t"))
    assert dexviz_threads() == []
    assert set(threading.enumerate()) <= before


def test_steps_use_the_app_client_re_entrantly_to_start_children(
    dex: ModuleType, tmp_path: Path
) -> None:
    app = load_app("parent_child_v123")
    assert app.run("inproc:family", str(tmp_path), 4) == [0, 1, 4, 9]
    assert dexviz_threads() == []


def test_subscription_app_describes_right_after_the_start_and_matches_a_dataclass(
    dex: ModuleType, tmp_path: Path
) -> None:
    app = load_app("subscription_v123")
    described, matched, note, output = app.run("inproc:subscription", str(tmp_path), "sub-1")
    assert described == "gold at 1900"
    assert matched == app.Plan("gold", 1900)
    assert note == "charge 1900"
    assert output == "gold cancelled: moving"
    assert dexviz_threads() == []
