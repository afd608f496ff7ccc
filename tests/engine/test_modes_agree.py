"""Simulation and live mode run one core: the same deterministic Flows give the same FlowResults,
outputs, final Attributes and Step executions both ways (issue 3, DESIGN.md "Engine").

"Deterministic" means the result does not depend on timing or on which waiter wins a message:
in the token scenario the editors take turns in a different order in each mode, but the section
protects the counter, so the final count is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from dexviz import (
    AsyncContext,
    Attribute,
    AttributeMap,
    Channel,
    Context,
    Engine,
    Flow,
    RPCResult,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    SubFlow,
    Timer,
    Wait,
    WaitForFailurePolicy,
    dead_end,
    force_complete,
    force_fail,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from dexviz.sdk.codec import to_json_ready
from tests.engine.flows_live import (
    NO_RETRY,
    ONE_ATTEMPT,
    LFlow,
    created_ids,
    engine_in,
    waiting,
)

TOTAL = Attribute("total", int)
TRAIL = Attribute("trail", str)
SQUARES = AttributeMap("squares", int)
NUMBERS = Channel("numbers", int)
TOKEN = Channel("token", str)
DONE = Channel("done", str)
ORDERS = Channel("orders", str)
SCHEMA = [TOTAL, TRAIL, SQUARES, NUMBERS, TOKEN, DONE, ORDERS]


# -- the Flows ---------------------------------------------------------------------------------


class ChainA(Step[int]):
    """Adds its input to ``total`` and moves on."""

    def execute(self, context: Context, n: int) -> StepDecision:
        TOTAL.set(context, TOTAL.get(context) + n)
        TRAIL.set(context, "A")
        context.record_event("a", n)
        return go_to(ChainB, n + 1)


class ChainB(Step[int]):
    """Passes a local from WaitFor to Execute, doubles ``total`` and completes."""

    def wait_for(self, context: Context, n: int) -> Wait:
        context.set_step_execution_local("seen", n * 100)
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        local = context.get_step_execution_local("seen", int) or 0
        TOTAL.set(context, TOTAL.get(context) * 2 + local)
        TRAIL.set(context, TRAIL.get(context) + "B")
        return graceful_complete(TOTAL.get(context))


class FanSquares(Step[int]):
    """Fans out one Square per number 1..n."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(*(StepMovement.of(Square, i) for i in range(1, n + 1)))


class Square(Step[int]):
    """Writes its square into the map and completes with it (every branch adds an output)."""

    def execute(self, context: Context, i: int) -> StepDecision:
        SQUARES.set(context, str(i), i * i)
        return graceful_complete(i * i)


class Produce(Step[int]):
    """Publishes 1..n and starts the summer."""

    def execute(self, context: Context, n: int) -> StepDecision:
        for i in range(1, n + 1):
            NUMBERS.publish(context, i)
        return go_to(Sum, n)


class Sum(Step[int]):
    """Takes all n numbers at once and force-completes with their sum."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(NUMBERS.for_n(n))

    def execute(self, context: Context, n: int) -> StepDecision:
        TOTAL.set(context, sum(NUMBERS.results(context)))
        return force_complete(TOTAL.get(context))


class TimerOrOrder(Step[int]):
    """Races a zero-length timer against an order nobody sends."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.any_of(Timer.by_duration(timedelta(0)), ORDERS.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete({"timer": context.has_timer_fired(0), "orders": n})


class Fragile(Step[int]):
    """Fails its only attempt; the failure is routed to Recover."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=ONE_ATTEMPT).on_execute_failure_proceed_to(Recover)

    def execute(self, context: Context, n: int) -> StepDecision:
        TOTAL.set(context, 999)  # discarded with the failed attempt
        raise LookupError(f"order {n} missing")


class Recover(Step[int]):
    """Reads the routed error."""

    def execute(self, context: Context, n: int) -> StepDecision:
        error = context.recovery_error
        assert error is not None
        TRAIL.set(context, error.error_type)
        return graceful_complete(error.detail)


class BadWait(Step[int]):
    """Its WaitFor fails; Execute proceeds anyway and notes it."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            wait_for_retry=ONE_ATTEMPT, wait_for_failure=WaitForFailurePolicy.PROCEED
        )

    def wait_for(self, context: Context, n: int) -> Wait:
        raise ValueError("no wait today")

    def execute(self, context: Context, n: int) -> StepDecision:
        TRAIL.set(context, f"proceeded={context.wait_for_method_failed()}")
        return force_fail(f"gave up on {n}")


class Sleepy(Step[int]):
    """A coroutine Step that sleeps, heartbeats and publishes."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        await asyncio.sleep(0.05)
        await context.heartbeat(n)
        DONE.publish(context, f"slept {n}")
        return go_to(Drain, n)


class Drain(Step[int]):
    """An async Execute that reads what the sleeper published."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(DONE.at_least(1))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        await asyncio.sleep(0)
        return graceful_complete(list(DONE.results(context)))


class Editor(Step[int]):
    """Takes the token, increments ``total`` inside the section, hands the token back."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(TOKEN.for_one())

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        value = TOTAL.get(context)
        await asyncio.sleep(0.01)
        TOTAL.set(context, value + 1)
        TOKEN.publish(context, "token")
        DONE.publish(context, f"editor {n}")
        return dead_end()


class OpenSection(Step[int]):
    """Puts the token in and starts n editors and the finisher."""

    def execute(self, context: Context, n: int) -> StepDecision:
        TOKEN.publish(context, "token")
        editors = [StepMovement.of(Editor, i) for i in range(n)]
        return go_to_many(*editors, StepMovement.of(CloseSection, n))


class CloseSection(Step[int]):
    """Waits for every editor and completes with the count and who edited."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(DONE.for_n(n))

    def execute(self, context: Context, n: int) -> StepDecision:
        editors = sorted(DONE.results(context))
        return graceful_complete({"total": TOTAL.get(context), "editors": editors})


class Spawn(Step[int]):
    """Runs two children and completes with their outputs."""

    def __init__(self, child: Flow[Any]) -> None:
        self.child = child

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.all_of(SubFlow.run(self.child, n), SubFlow.run(self.child, n + 1))

    def execute(self, context: Context, n: int) -> StepDecision:
        results = [SubFlow.get_condition_results(context, i) for i in range(2)]
        return graceful_complete([r.single_output(int) for r in results])


class Triple(Step[int]):
    """A child: completes with three times its input."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(3 * n)


class TakeOrder(Step[int]):
    """Waits for a client order and completes with it and the RPC's note."""

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(ORDERS.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(f"{ORDERS.results(context)[0]}/{TRAIL.get(context)}/{n}")


class ClientDriven(LFlow):
    """Driven from outside: an RPC, set_attribute and publish."""

    def __init__(self) -> None:
        super().__init__("ClientDriven", TakeOrder(), schema=SCHEMA)

    @rpc
    def note(self, context: Context, text: str) -> RPCResult[int]:
        TRAIL.set(context, text)
        TOTAL.set(context, TOTAL.get(context) + len(text))
        return RPCResult(TOTAL.get(context))


def drive_client(engine: Engine, flow: Flow[Any]) -> None:
    client = engine.client()
    waiting(engine, "ClientDriven", "TakeOrder-1")
    client.set_attribute("ClientDriven", TOTAL, 10)
    client.invoke_rpc(flow.note, "ClientDriven", "gift")  # type: ignore[attr-defined]
    client.publish("ClientDriven", ORDERS, "order-7", "order-8")


# -- the comparison -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One Flow to run both ways, its input, an optional driver and its expected outputs."""

    build: Callable[[], tuple[Flow[Any], list[Flow[Any]]]]
    input: Any
    expected: Any
    drive: Callable[[Engine, Flow[Any]], None] | None = None


def flow_of(flow_type: str, start: Step[Any], *others: Step[Any]) -> Callable[[], Any]:
    return lambda: (LFlow(flow_type, start, others, SCHEMA), [])


def spawner() -> tuple[Flow[Any], list[Flow[Any]]]:
    child = LFlow("TripleChild", Triple())
    return LFlow("Spawner", Spawn(child), (), SCHEMA), [child]


def client_driven() -> tuple[Flow[Any], list[Flow[Any]]]:
    return ClientDriven(), []


SCENARIOS = [
    Scenario(flow_of("Chain", ChainA(), ChainB()), 3, [406]),
    Scenario(flow_of("Squares", FanSquares(), Square()), 4, [1, 4, 9, 16]),
    Scenario(flow_of("Numbers", Produce(), Sum()), 5, [15]),
    Scenario(flow_of("TimerRace", TimerOrOrder()), 2, [{"timer": True, "orders": 2}]),
    Scenario(flow_of("Recovery", Fragile(), Recover()), 7, ["order 7 missing"]),
    Scenario(flow_of("Proceed", BadWait()), 2, []),
    Scenario(flow_of("Async", Sleepy(), Drain()), 4, [["slept 4"]]),
    Scenario(
        flow_of("Section", OpenSection(), Editor(), CloseSection()),
        4,
        [{"total": 4, "editors": [f"editor {i}" for i in range(4)]}],
    ),
    Scenario(spawner, 2, [[6, 9]]),
    Scenario(client_driven, 1, ["order-7/gift/1"], drive_client),
]


def run_all(mode: str) -> dict[str, dict[str, Any]]:
    """Run every scenario on one engine in ``mode`` and describe how each Flow ended."""
    built = [(s, *s.build()) for s in SCENARIOS]
    flows = [f for _, main, extra in built for f in (main, *extra)]
    outcomes: dict[str, dict[str, Any]] = {}
    with engine_in(flows, mode, seed=7) as engine:
        client = engine.client()
        for _, main, _ in built:
            client.start_flow(main, main.get_flow_type(), _input(main, built))
        for scenario, main, _ in built:
            if scenario.drive is not None:
                scenario.drive(engine, main)
        for _, main, _ in built:
            flow_id = main.get_flow_type()
            result = client.wait_for_flow(flow_id, timedelta(seconds=10))
            completions = sorted(
                (c.step_execution_id, to_json_ready(c.value)) for c in result.completions
            )
            outcomes[flow_id] = {
                "status": result.status.name,
                "error": (result.error_type, result.error_message),
                "outputs": completions,
                "attributes": dict(engine.flow_state(flow_id).attributes),
                "executions": sorted(created_ids(engine, flow_id)),
                "queued": dict(engine.flow_state(flow_id).channels),
            }
    return outcomes


def _input(main: Flow[Any], built: list[Any]) -> Any:
    return next(s.input for s, m, _ in built if m is main)


def test_a_set_of_deterministic_flows_gives_the_same_results_in_simulation_and_live() -> None:
    simulated = run_all("simulation")
    live = run_all("live")
    assert live == simulated
    for scenario in SCENARIOS:
        flow_type = scenario.build()[0].get_flow_type()
        outputs = [value for _, value in simulated[flow_type]["outputs"]]
        assert sorted(outputs, key=repr) == sorted(scenario.expected, key=repr), flow_type
    assert simulated["Proceed"]["status"] == "FAILED"
    assert simulated["Proceed"]["attributes"] == {"trail": "proceeded=True"}
    assert simulated["Recovery"]["attributes"] == {"trail": "builtins.LookupError"}
    assert simulated["ClientDriven"]["queued"]["orders"] == ("order-8",)
