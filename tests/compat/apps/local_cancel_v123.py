"""Cancelling a locally executed Step, written as a dex-python-sdk 1.23 application (issue 25).

``Transcode`` runs its Execute locally (``StepDurability.ASYNC``) with a heartbeat timeout and
works until it is told to stop. It is cancelled while running, either by an RPC
(``RPCResult.with_canceling_steps``) or by the decision of a sibling branch (``Supervise``,
which the start Step fans out next to it and which waits for a ``stop`` message). The Flow then
goes on to ``Wrap``, which completes it. Three forms of the handler, as an application would
write them: a coroutine (``AsyncContext``), a plain sync loop polling
``is_cancellation_requested()``, and a generator that yields ``heartbeat(...)``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Generator
from datetime import timedelta

from dex import (
    AsyncContext,
    BlobCacheConfig,
    Channel,
    Client,
    ClientOptions,
    Context,
    Flow,
    PersistenceSchema,
    Registry,
    RPCResult,
    Step,
    StepDecision,
    StepDurability,
    StepList,
    StepMovement,
    StepOptions,
    StepOutput,
    Wait,
    Worker,
    WorkerOptions,
    go_to,
    go_to_many,
    graceful_complete,
    heartbeat,
    open_blob_cache,
    rpc,
)

SEEN: list[str] = []
"""What the handlers saw, in order (``list.append`` is atomic across threads)."""
HEARD_BEFORE_CLOSE: list[str] = []
"""``SEEN`` as it was just before the Worker and Client closed."""
STARTED = threading.Event()
"""Set once the local Execute is running."""
WORK_S = 20.0
"""How long the local Execute would run if nothing stopped it."""

stop_requests = Channel("stop", str)


def local_options(heartbeat_s: float) -> StepOptions:
    """A local (ASYNC) Execute with a heartbeat timeout, never retried."""
    return StepOptions(
        execute_durability=StepDurability.ASYNC,
        heartbeat_timeout=timedelta(seconds=heartbeat_s),
    )


class AsyncTranscode(Step[int]):
    def __init__(self, heartbeat_s: float) -> None:
        self.heartbeat_s = heartbeat_s

    def get_step_options(self) -> StepOptions:
        return local_options(self.heartbeat_s)

    async def execute(self, context: AsyncContext, frames: int) -> StepDecision:
        STARTED.set()
        try:
            await asyncio.sleep(WORK_S)
        except asyncio.CancelledError:
            SEEN.append(f"async cancelled:{context.is_cancellation_requested()}")
            raise
        SEEN.append("async finished")
        return graceful_complete("transcoded")


class SyncTranscode(Step[int]):
    def __init__(self, heartbeat_s: float) -> None:
        self.heartbeat_s = heartbeat_s

    def get_step_options(self) -> StepOptions:
        return local_options(self.heartbeat_s)

    def execute(self, context: Context, frames: int) -> StepDecision:
        STARTED.set()
        deadline = time.monotonic() + WORK_S
        while time.monotonic() < deadline:
            if context.is_cancellation_requested():
                SEEN.append("sync cancelled")
                return graceful_complete("abandoned")
            time.sleep(0.01)
        SEEN.append("sync finished")
        return graceful_complete("transcoded")


class GeneratorTranscode(Step[int]):
    def __init__(self, heartbeat_s: float) -> None:
        self.heartbeat_s = heartbeat_s

    def get_step_options(self) -> StepOptions:
        return local_options(self.heartbeat_s)

    def execute(self, context: Context, frames: int) -> Generator[StepOutput, None, StepDecision]:
        STARTED.set()
        deadline = time.monotonic() + WORK_S
        done = 0
        while time.monotonic() < deadline:
            if context.is_cancellation_requested():
                SEEN.append(f"generator cancelled after {done}")
                return graceful_complete("abandoned")
            done += 1
            yield heartbeat(done)
            time.sleep(0.01)
        SEEN.append("generator finished")
        return graceful_complete("transcoded")


HANDLERS = {"async": AsyncTranscode, "sync": SyncTranscode, "generator": GeneratorTranscode}


class Wrap(Step[int]):
    def execute(self, context: Context, code: int) -> StepDecision:
        return graceful_complete(f"wrapped {code}")


class Supervise(Step[int]):
    """The sibling branch: on a stop message, cancel the local Step and wrap up."""

    def __init__(self, local: type[Step[int]]) -> None:
        self.local = local

    def wait_for(self, context: Context, frames: int) -> Wait:
        return Wait.until(stop_requests.for_one())

    def execute(self, context: Context, frames: int) -> StepDecision:
        return go_to(Wrap, 2).with_canceling_steps(self.local)


class Begin(Step[int]):
    def __init__(self, local: type[Step[int]], supervised: bool) -> None:
        self.local = local
        self.supervised = supervised

    def execute(self, context: Context, frames: int) -> StepDecision:
        if self.supervised:
            return go_to_many(StepMovement.of(self.local, frames), StepMovement.of(Supervise, 0))
        return go_to(self.local, frames)


class TranscodeFlow(Flow[int]):
    def __init__(
        self, handler: str, supervised: bool, heartbeat_s: float, local_starts: bool = False
    ) -> None:
        local = HANDLERS[handler]
        self.local_starts = local_starts
        self.local_type = local
        self.steps = [local(heartbeat_s), Wrap(), Supervise(local)]
        self.begin = Begin(local, supervised)

    def get_steps(self) -> StepList[int]:
        if self.local_starts:
            local, *others = self.steps
            return StepList.start_step(local).other_steps(*others)
        return StepList.start_step(self.begin).other_steps(*self.steps)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(stop_requests)

    @rpc
    def cancel_transcode(self, context: Context) -> RPCResult[str]:
        wrap = (StepMovement.of(Wrap, 1),)
        return RPCResult("cancelling", next_steps=wrap).with_canceling_steps(self.local_type)


def run(
    server_address: str,
    cache_dir: str,
    handler: str,
    by: str,
    heartbeat_s: float,
    linger_s: float = 0.0,
) -> tuple[str, float]:
    """Start, cancel the running local Step ``by`` an RPC or a sibling; (output, seconds)."""
    SEEN.clear()
    HEARD_BEFORE_CLOSE.clear()
    STARTED.clear()
    flow = TranscodeFlow(handler, by == "decision", heartbeat_s, by == "rpc-at-start")
    registry = Registry([flow], allow_async_handlers=True)
    cache = open_blob_cache(BlobCacheConfig(cache_dir, 1 << 20))
    worker = Worker(registry, cache, WorkerOptions(server_address=server_address))
    thread = threading.Thread(target=worker.start, name="transcode-worker")
    thread.start()
    client = Client(registry, cache, ClientOptions(server_address))
    try:
        client.start_flow(flow, "movie-1", 24)
        if not STARTED.wait(10):
            raise RuntimeError("the local Execute never started")
        began = time.monotonic()
        if by in ("rpc", "rpc-at-start"):
            client.invoke_rpc(flow.cancel_transcode, "movie-1")
        else:
            client.publish("movie-1", stop_requests, "operator")
        result = client.wait_for_flow("movie-1", timedelta(seconds=30))
        took = time.monotonic() - began
        time.sleep(linger_s)
        HEARD_BEFORE_CLOSE[:] = SEEN
        return result.single_output(str), took
    finally:
        client.close()
        worker.close()
        thread.join(5)
        cache.close()
