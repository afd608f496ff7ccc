"""Parent and child Flows coordinated through the application's own Client inside Steps.

The Dex pattern "parent-child" (examples/patterns/parent-child): a parent Step starts a child
Flow with the Client, the child publishes its result back to the parent's Channel, and the
parent completes with it. Handlers call the Client re-entrantly, from the Worker's handlers.
"""

from __future__ import annotations

import threading
from datetime import timedelta

from dex import (
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
    Wait,
    Worker,
    WorkerOptions,
    go_to,
    graceful_complete,
    open_blob_cache,
)

child_results = Channel("childResults", int)


class Services:
    """Dependencies the Steps get through their constructors, as Dex apps pass them."""

    client: Client | None = None


class SpawnChildren(Step[int]):
    def __init__(self, services: Services, child: ChildFlow) -> None:
        self.services = services
        self.child = child

    def execute(self, context: Context, count: int) -> StepDecision:
        assert self.services.client is not None
        for index in range(count):
            self.services.client.start_flow(
                self.child, f"{context.flow_id}-child-{index}", (context.flow_id, index)
            )
        return go_to(Gather, count)


class Gather(Step[int]):
    def wait_for(self, context: Context, count: int) -> Wait:
        return Wait.until(child_results.for_n(count))

    def execute(self, context: Context, count: int) -> StepDecision:
        return graceful_complete(sorted(child_results.results(context)))


class ParentFlow(Flow[int]):
    def __init__(self, services: Services, child: ChildFlow) -> None:
        self.spawn = SpawnChildren(services, child)
        self.gather = Gather()

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(self.spawn).other_steps(self.gather)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(child_results)


class Square(Step[tuple[str, int]]):
    def __init__(self, services: Services) -> None:
        self.services = services

    def execute(self, context: Context, job: tuple[str, int]) -> StepDecision:
        parent_id, index = job
        assert self.services.client is not None
        self.services.client.publish(parent_id, child_results, index * index)
        return graceful_complete()


class ChildFlow(Flow[tuple[str, int]]):
    def __init__(self, services: Services) -> None:
        self.square = Square(services)

    def get_steps(self) -> StepList[tuple[str, int]]:
        return StepList.start_step(self.square)


def run(server_address: str, cache_dir: str, children: int) -> list[int]:
    """Wire the app, run one parent with ``children`` children, return the parent's output."""
    services = Services()
    child = ChildFlow(services)
    parent = ParentFlow(services, child)
    registry = Registry([parent, child])
    cache = open_blob_cache(BlobCacheConfig(cache_dir, 1 << 20))
    worker = Worker(registry, cache, WorkerOptions(server_address=server_address))
    thread = threading.Thread(target=worker.start, name="parent-child-worker")
    thread.start()
    services.client = Client(registry, cache, ClientOptions(server_address))
    try:
        services.client.start_flow(parent, "parent", children)
        result = services.client.wait_for_flow("parent", timedelta(seconds=20))
        return list(result.single_output(list[int]))
    finally:
        services.client.close()
        worker.close()
        thread.join(5)
        cache.close()
