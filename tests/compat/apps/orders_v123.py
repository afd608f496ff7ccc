"""An order-approval application written as a dex-python-sdk 1.23 application.

Everything below is plain Dex code: Steps addressed by class, ``go_to_many``, an RPC that
publishes to a Channel, a timer raced against it, ``retry_after`` from ``dex._grpc_errors``, and
the usual wiring (Registry, blob cache, Worker on a thread, Client).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta

from dex import (
    Attribute,
    BlobCacheConfig,
    Channel,
    Client,
    ClientOptions,
    Context,
    Flow,
    FlowResult,
    PersistenceSchema,
    Registry,
    RPCResult,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    Timer,
    Wait,
    Worker,
    WorkerOptions,
    dead_end,
    force_fail,
    go_to,
    go_to_many,
    graceful_complete,
    open_blob_cache,
    rpc,
)
from dex._grpc_errors import retry_after
from dex.runtime_errors import FlowNotFoundError
from dex.step_execution import StepExecutionId, TimerId


@dataclass(frozen=True)
class Order:
    sku: str
    quantity: int


status = Attribute("status", str)
reserved = Attribute("reserved", int)
approvals = Channel("approvals", str)

INVENTORY_ATTEMPTS: list[int] = []  # what the inventory "service" saw, attempt by attempt


class Validate(Step[Order]):
    def execute(self, context: Context, order: Order) -> StepDecision:
        INVENTORY_ATTEMPTS.append(context.attempt)
        if context.attempt == 1:
            raise retry_after(1, ConnectionError("inventory service warming up"))
        status.set(context, "validated")
        return go_to_many(
            StepMovement.of(Reserve, order.quantity),
            StepMovement.of(AwaitApproval, order.sku),
        )


class Reserve(Step[int]):
    def execute(self, context: Context, quantity: int) -> StepDecision:
        reserved.set(context, quantity)
        return dead_end()


class AwaitApproval(Step[str]):
    def wait_for(self, context: Context, sku: str) -> Wait:
        return Wait.any_of(
            approvals.for_one(condition_id="approval"),
            Timer.by_duration(timedelta(hours=1), condition_id="expiry"),
        )

    def execute(self, context: Context, sku: str) -> StepDecision:
        if context.has_timer_fired():
            return force_fail(f"approval of {sku} expired")
        (approver,) = approvals.results(context)
        status.set(context, f"approved by {approver}")
        return go_to(Ship, f"{sku} approved by {approver}")


class Ship(Step[str]):
    def execute(self, context: Context, note: str) -> StepDecision:
        return graceful_complete(f"shipped: {note}")


class OrderFlow(Flow[Order]):
    def __init__(self) -> None:
        self.validate = Validate()
        self.reserve = Reserve()
        self.await_approval = AwaitApproval()
        self.ship = Ship()

    def get_steps(self) -> StepList[Order]:
        return StepList.start_step(self.validate).other_steps(
            self.reserve, self.await_approval, self.ship
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(status, reserved, approvals)

    @rpc
    def approve(self, context: Context, approver: str) -> RPCResult[str]:
        approvals.publish(context, approver)
        return RPCResult(f"approval by {approver} queued")

    @rpc
    def current_status(self, context: Context) -> RPCResult[str]:
        return RPCResult(status.get(context) or "new")


class OrderApp:
    """The application's wiring, as a Dex service would do it at startup."""

    def __init__(self, server_address: str, cache_dir: str) -> None:
        self.flow = OrderFlow()
        self.registry = Registry([self.flow])
        self.cache = open_blob_cache(BlobCacheConfig(cache_dir, 64 << 20))
        self.worker = Worker(
            self.registry,
            self.cache,
            WorkerOptions(bind_address=":8803", server_address=server_address),
        )
        self.client = Client(
            self.registry,
            self.cache,
            ClientOptions(server_address, self.worker.worker_target),
        )
        self._thread = threading.Thread(target=self.worker.start, name="orders-worker")
        self._thread.start()

    def place(self, order_id: str, order: Order) -> str:
        return self.client.start_flow(self.flow, order_id, order)

    def approve(self, order_id: str, approver: str) -> str:
        return self.client.invoke_rpc(self.flow.approve, order_id, approver)

    def status(self, order_id: str) -> str:
        return self.client.invoke_rpc(self.flow.current_status, order_id)

    def expire_now(self, order_id: str) -> None:
        self.client.skip_timer(
            order_id, StepExecutionId("AwaitApproval", 1), TimerId.by_condition_id("expiry")
        )

    def wait_until_awaiting(self, order_id: str) -> None:
        self.client.wait_for_step_completion(
            order_id, StepExecutionId("Validate", 1), timedelta(seconds=10)
        )

    def outcome(self, order_id: str) -> FlowResult:
        return self.client.wait_for_flow(order_id, timedelta(seconds=20))

    def lookup(self, order_id: str) -> str | None:
        try:
            return self.client.describe_flow(order_id).status.value
        except FlowNotFoundError:
            return None

    def close(self) -> None:
        self.client.close()
        self.worker.close()
        self._thread.join(5)
        self.cache.close()
