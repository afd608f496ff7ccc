"""A recording stand-in for the live engine, so the hub, Worker and Client lifecycles can be
tested without threads of an engine."""

from __future__ import annotations

from typing import Any

from dexviz import (
    Context,
    Flow,
    Registry,
    RPCResult,
    Step,
    StepDecision,
    StepList,
    graceful_complete,
    rpc,
)
from dexviz.compat import Hub


class Done(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class TinyFlow(Flow[int]):
    def __init__(self) -> None:
        self.done = Done()

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(self.done)

    @rpc
    def ping(self, context: Context) -> RPCResult[str]:
        return RPCResult("pong")


class OtherFlow(TinyFlow):
    pass


class FakeClient:
    """Records calls; has no ``run_id`` keyword and no ``search_flows``, unlike Dex's Client."""

    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.closed = False

    def start_flow(self, flow: Any, flow_id: str, input: Any = None, options: Any = None) -> str:
        self.engine.calls.append(("start_flow", flow_id, input, options))
        return "run-1"

    def publish(self, flow_id: str, channel: Any, *values: Any) -> None:
        self.engine.calls.append(("publish", flow_id, channel, values))

    def invoke_rpc(self, rpc_method: Any, flow_id: str, input: Any = None, **kwargs: Any) -> Any:
        self.engine.calls.append(("invoke_rpc", flow_id, input, kwargs))
        return "pong"

    def health_check(self) -> bool:
        return True

    def close(self) -> None:
        self.closed = True


class FakeAsyncClient(FakeClient):
    """Async methods, as the engine's AsyncClient has."""

    async def start_flow(  # type: ignore[override]
        self, flow: Any, flow_id: str, input: Any = None, options: Any = None
    ) -> str:
        return super().start_flow(flow, flow_id, input, options)

    async def close(self) -> None:  # type: ignore[override]
        self.closed = True


class FakeEngine:
    """What the hub needs from an engine, recording how it is used."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.calls: list[tuple[Any, ...]] = []
        self.closes = 0
        self.clients: list[FakeClient] = []

    def client(self) -> FakeClient:
        self.clients.append(FakeClient(self))
        return self.clients[-1]

    def async_client(self) -> FakeAsyncClient:
        client = FakeAsyncClient(self)
        self.clients.append(client)
        return client

    def close(self) -> None:
        self.closes += 1


class FakeHub(Hub):
    """A Hub whose engines are FakeEngines, kept in ``built`` for inspection."""

    def __init__(self) -> None:
        self.built: list[FakeEngine] = []
        super().__init__(self._build)

    def _build(self, registry: Registry) -> FakeEngine:
        self.built.append(FakeEngine(registry))
        return self.built[-1]
