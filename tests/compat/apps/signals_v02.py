"""A signal-collecting application in the dex-python-sdk 0.2 style.

0.2 idioms: ``go_to_multi``, Steps addressed by their instances (``go_to(self.flow.report, …)``),
coroutine handlers annotated with plain ``Context``, and a Client that talks to the Flow through
``publish``, ``get_attribute`` and ``set_attribute``.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

from dex import (
    AsyncClient,
    AsyncWorker,
    Attribute,
    BlobCacheConfig,
    Channel,
    Client,
    ClientOptions,
    Context,
    Flow,
    PersistenceSchema,
    Registry,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    Wait,
    Worker,
    WorkerOptions,
    dead_end,
    go_to,
    go_to_multi,
    graceful_complete,
    open_blob_cache,
)

counter = Attribute("counter", int)
label = Attribute("label", str)
signals = Channel("signals", str)


class Fanout(Step[int]):
    def __init__(self, flow: SignalFlow) -> None:
        self.flow = flow

    def get_step_type(self) -> str:
        return "Init"

    async def execute(self, context: Context, rounds: int) -> StepDecision:
        await asyncio.sleep(0)
        counter.set(context, 0)
        return go_to_multi(
            StepMovement.of(self.flow.collect, rounds),
            StepMovement.of(self.flow.tick, rounds),
        )


class Tick(Step[int]):
    async def execute(self, context: Context, rounds: int) -> StepDecision:
        counter.set(context, counter.get(context) + rounds)
        return dead_end()


class Collect(Step[int]):
    def __init__(self, flow: SignalFlow) -> None:
        self.flow = flow

    def wait_for(self, context: Context, count: int) -> Wait:
        return Wait.until(signals.for_n(count))

    async def execute(self, context: Context, count: int) -> StepDecision:
        return go_to(self.flow.report, ",".join(signals.results(context)))


class Report(Step[str]):
    def execute(self, context: Context, joined: str) -> StepDecision:
        return graceful_complete(f"{label.get(context)}:{joined}")


class SignalFlow(Flow[int]):
    def __init__(self) -> None:
        self.fanout = Fanout(self)
        self.tick = Tick()
        self.collect = Collect(self)
        self.report = Report()

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(self.fanout).other_steps(self.tick, self.collect, self.report)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(counter, label, signals)


def build(server_address: str, cache_dir: str) -> tuple[SignalFlow, Registry, object]:
    flow = SignalFlow()
    registry = Registry([flow], allow_async_handlers=True)
    cache = open_blob_cache(BlobCacheConfig(cache_dir, 1 << 20))
    return flow, registry, cache


def run_threaded(server_address: str, cache_dir: str, flow_id: str) -> tuple[str, int]:
    """Worker on a thread and a sync Client; returns (output, counter)."""
    flow, registry, cache = build(server_address, cache_dir)
    worker = Worker(registry, cache, WorkerOptions(server_address=server_address))
    thread = threading.Thread(target=worker.start, name="signals-worker")
    thread.start()
    try:
        with Client(registry, cache, ClientOptions(server_address=server_address)) as client:
            client.start_flow(flow, flow_id, 3)
            client.set_attribute(flow_id, label, "batch-7")
            client.publish(flow_id, signals, "a", "b")
            client.publish(flow_id, signals, "c")
            result = client.wait_for_flow(flow_id, timedelta(seconds=20))
            return result.single_output(str), client.get_attribute(flow_id, counter)
    finally:
        worker.close()
        thread.join(5)


async def run_async(server_address: str, cache_dir: str, flow_id: str) -> tuple[str, int]:
    """AsyncWorker as a task and an AsyncClient; returns (output, counter)."""
    flow, registry, cache = build(server_address, cache_dir)
    worker = AsyncWorker(registry, cache, WorkerOptions(server_address=server_address))
    serving = asyncio.create_task(worker.start())
    try:
        async with AsyncClient(registry, cache, ClientOptions(server_address)) as client:
            await client.start_flow(flow, flow_id, 2)
            await client.set_attribute(flow_id, label, "async")
            await client.publish(flow_id, signals, "x", "y")
            result = await client.wait_for_flow(flow_id, timedelta(seconds=20))
            return result.single_output(str), await client.get_attribute(flow_id, counter)
    finally:
        await worker.close()
        await serving
