"""A subscription application in the dex-python-sdk 1.23 style (issue 25's Dex behaviours).

The Dex product "subscription": the start Step records the subscription and waits for a cancel
request; the application calls ``describe`` right after ``start_flow`` (it must see the start
Step's write), waits for the plan with an ``AttributeMatch`` on a dataclass value, and keeps
per-customer notes in an AttributeMap whose keys contain spaces and '/'.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta

from dex import (
    Attribute,
    AttributeMap,
    AttributeMatch,
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
    StepList,
    Wait,
    Worker,
    WorkerOptions,
    graceful_complete,
    open_blob_cache,
    rpc,
)


@dataclass(frozen=True)
class Plan:
    """The subscribed plan, stored as a structured Attribute value."""

    tier: str
    monthly_cents: int


plan = Attribute("plan", Plan)
notes = AttributeMap("notes", str)
cancellations = Channel("cancellations", str)


class Subscribe(Step[Plan]):
    def wait_for(self, context: Context, chosen: Plan) -> Wait:
        plan.set(context, chosen)
        notes.set(context, "billing / ops team", f"charge {chosen.monthly_cents}")
        return Wait.until(cancellations.for_one())

    def execute(self, context: Context, chosen: Plan) -> StepDecision:
        (reason,) = cancellations.results(context)
        return graceful_complete(f"{chosen.tier} cancelled: {reason}")


class SubscriptionFlow(Flow[Plan]):
    def __init__(self) -> None:
        self.subscribe = Subscribe()

    def get_steps(self) -> StepList[Plan]:
        return StepList.start_step(self.subscribe)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(plan, notes, cancellations)

    @rpc
    def describe(self, context: Context) -> RPCResult[str]:
        current = plan.get(context)
        return RPCResult(f"{current.tier} at {current.monthly_cents}")


def run(server_address: str, cache_dir: str, flow_id: str) -> tuple[str, Plan, str, str]:
    """Subscribe, describe at once, match the plan, cancel; return what the app saw."""
    flow = SubscriptionFlow()
    registry = Registry([flow])
    cache = open_blob_cache(BlobCacheConfig(cache_dir, 1 << 20))
    worker = Worker(registry, cache, WorkerOptions(server_address=server_address))
    thread = threading.Thread(target=worker.start, name="subscription-worker")
    thread.start()
    client = Client(registry, cache, ClientOptions(server_address))
    try:
        gold = Plan("gold", 1900)
        client.start_flow(flow, flow_id, gold)
        described = client.invoke_rpc(flow.describe, flow_id)
        matched = client.wait_for_attribute_match(
            flow_id, plan, AttributeMatch.equal_to(gold), timedelta(seconds=10)
        )
        note = client.get_attribute(flow_id, notes, "billing / ops team")
        client.publish(flow_id, cancellations, "moving")
        result = client.wait_for_flow(flow_id, timedelta(seconds=10))
        return described, matched, note, result.single_output(str)
    finally:
        client.close()
        worker.close()
        thread.join(5)
        cache.close()
