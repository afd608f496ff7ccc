"""Server addresses, Workers and Clients without a live engine: the hub shares one engine per
address and closes it with the last holder; Worker.start() blocks until close(); Clients forward
Dex's calls to the engine's client."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest

from dexviz import FlowDefinitionError, Registry, StartFlowOptions
from dexviz.compat import (
    AsyncClient,
    AsyncWorker,
    BlobCacheConfig,
    Client,
    NoWorkerError,
    Worker,
    open_blob_cache,
)
from dexviz.compat.worker import target_address
from dexviz.sdk import Channel, ClientOptions, WorkerOptions, WorkerTarget
from tests.compat.fakes import FakeHub, OtherFlow, TinyFlow

CACHE = open_blob_cache(BlobCacheConfig("/tmp/dexviz-test-cache", 1 << 20))
INBOX = Channel("inbox", str)


@pytest.fixture
def hub() -> FakeHub:
    return FakeHub()


@pytest.fixture
def flow() -> TinyFlow:
    return TinyFlow()


@pytest.fixture
def registry(flow: TinyFlow) -> Registry:
    return Registry([flow])


def options(address: str) -> WorkerOptions:
    return WorkerOptions(server_address=address)


def test_server_address_is_an_opaque_key_shared_by_workers_and_clients(
    hub: FakeHub, registry: Registry
) -> None:
    worker = Worker(registry, CACHE, options("inproc:tests"), hub=hub)
    client = Client(registry, CACHE, ClientOptions("inproc:tests"), hub=hub)
    other = Worker(registry, CACHE, options("inproc:other"), hub=hub)
    assert len(hub.built) == 2
    assert client.engine is worker.engine is hub.built[0]
    assert other.engine is hub.built[1]
    assert hub.held() == {"inproc:other": 1, "inproc:tests": 2}
    assert hub.addresses() == ("inproc:other", "inproc:tests")
    for closable in (client, worker, other):
        closable.close()
    assert hub.held() == {}


def test_last_close_closes_the_engine_once(hub: FakeHub, registry: Registry) -> None:
    worker = Worker(registry, CACHE, options("inproc:a"), hub=hub)
    client = Client(registry, CACHE, ClientOptions("inproc:a"), hub=hub)
    engine = hub.built[0]
    worker.close()
    worker.close()
    assert engine.closes == 0  # the Client still holds the address
    client.close()
    client.close()
    assert engine.closes == 1
    assert hub.addresses() == ()
    again = Worker(registry, CACHE, options("inproc:a"), hub=hub)
    assert again.engine is not engine  # a fresh engine after the last close
    again.close()


def test_client_built_before_its_worker_is_usable_once_the_worker_exists(
    hub: FakeHub, registry: Registry, flow: TinyFlow
) -> None:
    client = Client(registry, CACHE, ClientOptions("inproc:late"), hub=hub)
    with pytest.raises(NoWorkerError, match="no dexviz Worker serves server address 'inproc:late'"):
        client.start_flow(flow, "f-1", 1)
    assert client.health_check() is False
    with Worker(registry, CACHE, options("inproc:late"), hub=hub):
        assert client.start_flow(flow, "f-1", 1) == "run-1"
        assert client.health_check() is True
    client.close()


def test_no_worker_error_names_the_addresses_that_have_one(
    hub: FakeHub, registry: Registry
) -> None:
    worker = Worker(registry, CACHE, options("inproc:tests"), hub=hub)
    client = Client(registry, CACHE, ClientOptions("inproc:test"), hub=hub)
    with pytest.raises(NoWorkerError, match="addresses with a Worker: inproc:tests"):
        client.publish("f", INBOX, "x")
    client.close()
    worker.close()


def test_second_worker_with_other_flows_on_the_same_address_is_rejected(
    hub: FakeHub, registry: Registry, flow: TinyFlow
) -> None:
    first = Worker(registry, CACHE, options("inproc:x"), hub=hub)
    same_flows = Worker(Registry([flow]), CACHE, options("inproc:x"), hub=hub)
    with pytest.raises(ValueError, match="'inproc:x' already runs Registry\\(\\[TinyFlow\\]\\)"):
        Worker(Registry([OtherFlow()]), CACHE, options("inproc:x"), hub=hub)
    assert hub.held() == {"inproc:x": 2}  # the rejected Worker gave its hold back
    same_flows.close()
    first.close()


def test_server_address_must_be_a_non_empty_string(hub: FakeHub, registry: Registry) -> None:
    with pytest.raises(ValueError, match="non-empty string, got ''"):
        Worker(registry, CACHE, options(""), hub=hub)
    with pytest.raises(TypeError, match="a Worker takes a Registry, got list"):
        Worker([TinyFlow()], CACHE, hub=hub)  # type: ignore[arg-type]


def test_worker_target_is_derived_from_bind_address_or_given(
    hub: FakeHub, registry: Registry
) -> None:
    assert target_address(":8803") == "localhost:8803"
    assert target_address("0.0.0.0:9000") == "localhost:9000"
    assert target_address("worker-1:9000") == "worker-1:9000"
    assert target_address("inproc") == "inproc"
    default = Worker(registry, CACHE, hub=hub)  # WorkerOptions() defaults, as in Dex
    assert default.worker_target == WorkerTarget("localhost:8803")
    assert isinstance(default.worker_target.address, str)
    given = Worker(
        registry,
        CACHE,
        WorkerOptions(worker_target=WorkerTarget("app:1", headless=True)),
        hub=hub,
    )
    assert given.worker_target == WorkerTarget("app:1", headless=True)
    unset = Worker(
        registry, CACHE, WorkerOptions(bind_address=":7000", worker_target=None), hub=hub
    )
    assert unset.worker_target.address == "localhost:7000"
    for worker in (default, given, unset):
        worker.close()


def test_worker_start_blocks_until_close_and_returns_promptly(
    hub: FakeHub, registry: Registry
) -> None:
    worker = Worker(registry, CACHE, options("inproc:w"), hub=hub)
    thread = threading.Thread(target=worker.start, name="app-worker")
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()
    worker.close()
    thread.join(2)
    assert not thread.is_alive()
    assert hub.built[0].closes == 1
    with pytest.raises(RuntimeError, match="Worker can only start once"):
        worker.start()


def test_worker_closed_before_start_returns_at_once(hub: FakeHub, registry: Registry) -> None:
    worker = Worker(registry, CACHE, options("inproc:w"), hub=hub)
    worker.stop()
    worker.start()  # returns: the Worker was stopped before the thread got to run it
    worker.close()
    assert "closed" in repr(worker)


def test_async_worker_start_as_a_task_returns_after_close(hub: FakeHub, registry: Registry) -> None:
    async def main() -> None:
        async with AsyncWorker(registry, CACHE, options("inproc:aw"), hub=hub) as worker:
            task = asyncio.create_task(worker.start())
            await asyncio.sleep(0.05)
            assert not task.done()
            await worker.close()
            await asyncio.wait_for(task, 2)
            with pytest.raises(RuntimeError, match="AsyncWorker can only start once"):
                await worker.start()

    asyncio.run(main())
    assert hub.built[0].closes == 1


def test_async_worker_closed_from_another_thread_wakes_its_start(
    hub: FakeHub, registry: Registry
) -> None:
    worker = AsyncWorker(registry, CACHE, options("inproc:aw"), hub=hub)
    started = threading.Event()

    async def serve() -> None:
        started.set()
        await worker.start()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), name="app-loop")
    thread.start()
    started.wait(2)
    asyncio.run(worker.close())
    thread.join(2)
    assert not thread.is_alive()


def test_client_forwards_dex_calls_and_only_the_keywords_set(
    hub: FakeHub, registry: Registry, flow: TinyFlow
) -> None:
    worker = Worker(registry, CACHE, options("inproc:c"), hub=hub)
    engine = hub.built[0]
    with Client(registry, CACHE, ClientOptions("inproc:c", worker.worker_target), hub=hub) as c:
        start = StartFlowOptions(timeout=timedelta(seconds=5))
        assert c.start_flow(flow, "f-1", 7, start) == "run-1"
        c.publish("f-1", INBOX, "a", "b")  # the engine client has no run_id keyword
        assert c.invoke_rpc(flow.ping, "f-1") == "pong"
        c.invoke_rpc(flow.ping, "f-1", run_id="r-9")
        with pytest.raises(NotImplementedError, match="Client.search_flows is part of Dex"):
            c.search_flows("FlowType = 'TinyFlow'", 10)
    assert engine.calls == [
        ("start_flow", "f-1", 7, start),
        ("publish", "f-1", INBOX, ("a", "b")),
        ("invoke_rpc", "f-1", None, {}),
        ("invoke_rpc", "f-1", None, {"run_id": "r-9"}),
    ]
    assert len(engine.clients) == 1 and engine.clients[0].closed
    worker.close()


def test_client_rejects_flows_and_rpcs_not_in_its_registry(
    hub: FakeHub, registry: Registry
) -> None:
    worker = Worker(registry, CACHE, options("inproc:c"), hub=hub)
    client = Client(registry, CACHE, ClientOptions("inproc:c"), hub=hub)
    stranger = OtherFlow()
    with pytest.raises(FlowDefinitionError, match="is not registered"):
        client.start_flow(stranger, "f-1", 1)
    with pytest.raises(FlowDefinitionError, match="is not registered"):
        client.invoke_rpc(stranger.ping, "f-1")
    with pytest.raises(TypeError, match="bound RPC method of the registered Flow"):
        client.invoke_rpc(TinyFlow.ping, "f-1")
    client.close()
    with pytest.raises(RuntimeError, match="this Client is closed"):
        client.publish("f-1", INBOX, "x")
    worker.close()


def test_async_client_methods_are_coroutines_on_the_engine_async_client(
    hub: FakeHub, registry: Registry, flow: TinyFlow
) -> None:
    worker = Worker(registry, CACHE, options("inproc:ac"), hub=hub)
    client = AsyncClient(registry, CACHE, ClientOptions("inproc:ac"), hub=hub)

    async def use() -> str:
        call = client.start_flow(flow, "f-1", 1)
        assert asyncio.iscoroutine(call)
        return await call

    assert asyncio.run(use()) == "run-1"
    assert asyncio.run(use()) == "run-1"  # a second loop gets its own engine AsyncClient
    engine = hub.built[0]
    assert len(engine.clients) == 2

    async def finish() -> None:
        await client.publish("f-1", INBOX, "x")
        async with client:
            assert await client.health_check()
        assert await client.health_check() is False

    asyncio.run(finish())
    assert engine.clients[-1].closed
    worker.close()
    assert engine.closes == 1


def test_pull_mode_worker_advertises_a_pull_target(hub: FakeHub, registry: Registry) -> None:
    worker = Worker(registry, CACHE, WorkerOptions(pull=object()), hub=hub)
    assert worker.worker_target == WorkerTarget(pull=True)
    worker.close()
