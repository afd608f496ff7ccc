"""RPCs: a client call runs a Flow method whose effects commit atomically (R115-R124)."""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import Move
from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.effects import (
    apply_deletes,
    apply_publishes,
    apply_writes,
    check_deletes,
    emit_published,
    staged_payload,
)
from dexviz.engine.core.errors import service_error, worker_error
from dexviz.engine.core.failure_info import error_type_name
from dexviz.engine.core.runners import HANDLER_EXITS, LiveRunner, guard_exits, reraise_exit
from dexviz.engine.core.state import FlowRun, Phase
from dexviz.engine.operations import existing_run
from dexviz.history.kinds import EventKind
from dexviz.sdk.clock import handler_clock
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.decision import StepDecision
from dexviz.sdk.definitions import RpcDefinition
from dexviz.sdk.errors import (
    ChannelMessageNotFoundError,
    FlowClosingError,
    FlowDefinitionError,
    FlowNotActiveError,
    RequestTimeoutError,
    RpcLockConflictError,
    ValueMappingError,
)
from dexviz.sdk.flow import RPCResult
from dexviz.sdk.results import FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


def find_rpc(run: FlowRun, method: Any) -> RpcDefinition:
    """The RpcDefinition of a bound method of the registered Flow (or an RPC name)."""
    if isinstance(method, str):
        found = run.definition.rpcs.get(method)
    else:
        found = run.definition.rpc_by_function.get(getattr(method, "__func__", method))
    if found is None:
        name = method if isinstance(method, str) else getattr(method, "__name__", repr(method))
        raise FlowDefinitionError(f"{name!r} is not an @rpc method of Flow {run.flow_type!r}")
    return found


def start_step_settled(rt: Runtime, flow_id: str) -> bool:
    """Whether RPCs to ``flow_id`` may run: its start Step's first attempt has ended.

    Dex admits an RPC only after the first attempt of the start Step's first method (WaitFor,
    or Execute without one) committed or failed, so an RPC invoked right after ``start_flow``
    sees that method's Attribute writes (docs/dex-fidelity.md, "RPCs after the start Step").
    A Flow without a start Step, a delayed start, a continued run and a first method that
    takes Attribute locks (an RPC then conflicts or not by R72) admit RPCs at once; so does a
    first method with a ``heartbeat_timeout`` once it runs.
    """
    run = rt.runs.get(flow_id)
    if run is None or not run.is_open or run.definition.start is None:
        return True
    options = run.start_options
    if options is not None and getattr(options, "start_delay", None):
        return True
    start = run.definition.start
    ex = run.executions.get(f"{start.step_type}-1")
    if ex is None or ex.from_execution_id != "__start__" or ex.attempt > 1:
        return True
    first = Phase.WAIT_FOR if start.has_wait_for else Phase.EXECUTE
    options = ex.options
    locks = (
        options.wait_for_lock_attributes if start.has_wait_for else options.execute_lock_attributes
    )
    if locks:
        return True  # a locking first method orders RPCs through its locks instead (R72)
    if ex.phase is first and ex.options.heartbeat_timeout:
        # A heartbeating method is long-running and cancellable (R107): holding RPCs until it
        # ends would hold the very RPC that cancels it.
        return True
    return ex.phase not in (Phase.QUEUED, first) or ex.last_failure is not None


def invoke_rpc(
    rt: Runtime, method: Any, flow_id: str, input: Any = None, options: Any = None
) -> Any:
    """Run an RPC on the current run and return its output (R115-R120, R156).

    The handler runs outside the engine's lock, against a snapshot; its effects then commit
    under the lock in one step, so a slow RPC never stalls the engine.
    """
    steps = _invoke(rt, method, flow_id, input, options)
    try:
        request = next(steps)
        while True:
            try:
                outcome = _drive(rt, *request)
            except BaseException as error:  # noqa: BLE001 - handed back to the RPC's steps
                request = steps.throw(error)
            else:
                request = steps.send(outcome)
    except StopIteration as stop:
        return stop.value


async def invoke_rpc_in_task(
    rt: Runtime, method: Any, flow_id: str, input: Any = None, options: Any = None
) -> Any:
    """The same RPC called from a handler Task on the simulation's loop (an AsyncClient there).

    An async RPC handler is awaited in that Task rather than driven by running the engine
    from inside it, which would step other Tasks re-entrantly.
    """
    steps = _invoke(rt, method, flow_id, input, options)
    try:
        request = next(steps)
        while True:
            bound, args = request
            try:
                outcome = await bound(*args)
            except BaseException as error:  # noqa: BLE001 - handed back to the RPC's steps
                request = steps.throw(error)
            else:
                request = steps.send(outcome)
    except StopIteration as stop:
        return stop.value


def _invoke(
    rt: Runtime, method: Any, flow_id: str, input: Any, options: Any
) -> Generator[tuple[Any, tuple[Any, ...]], Any, Any]:
    """invoke_rpc's steps; yields ``(handler, args)`` for a simulated async handler to run."""
    with rt.lock:
        if flow_id not in rt.runs:
            # Dex reports a Flow id with no run as not active, as publish does (R156).
            raise service_error(
                FlowNotActiveError, "the Flow is not found", flow_id=flow_id, operation="invoke_rpc"
            )
        run = existing_run(rt, flow_id, "invoke_rpc")
        rpc = find_rpc(run, method)
        if run.closing and run.status is FlowStatus.RUNNING:
            raise service_error(
                FlowClosingError,
                f"RPC {rpc.name!r} rejected: the Flow is closing",
                flow_id=flow_id,
                operation="invoke_rpc",
            )
        if not run.is_open and rpc.is_transactional:
            raise service_error(
                FlowNotActiveError,
                f"RPC {rpc.name!r} needs an active Flow",
                flow_id=flow_id,
                operation="invoke_rpc",
            )
        owner = f"rpc:{rpc.name}:{next(_INVOCATIONS)}"
        # Per-call locks (RPCInvokeOptions) add to the decorator's, without duplicates.
        extra = getattr(options, "lock_attribute_map_instances", ()) or ()
        locks = (*rpc.options.lock_attributes, *extra)
        keys = tuple(dict.fromkeys(lock.physical_name for lock in locks))
        if keys and not rt.lock_table(run).try_acquire(keys, owner):
            raise service_error(
                RpcLockConflictError,
                f"RPC {rpc.name!r}: an Attribute lock is held",
                flow_id=flow_id,
                operation="invoke_rpc",
            )
        snapshot = dict(run.attributes)
        admitted = rpc.is_transactional or bool(keys)
        run.admitted_rpcs += admitted
    try:
        ctx, result = yield from _call(rt, run, rpc, input, snapshot)
        with rt.lock:
            return _commit(rt, run, rpc, ctx, result, input)
    finally:
        with rt.lock:
            _leave(rt, run, owner, keys, admitted)


def _leave(rt: Runtime, run: FlowRun, owner: str, keys: tuple[str, ...], admitted: bool) -> None:
    """Release the RPC's locks; the last admitted RPC of a closing run lets it close (R147)."""
    if keys:
        for resume in rt.lock_table(run).release(owner):
            rt.scheduler.call_soon(resume)
    if admitted:
        run.admitted_rpcs -= 1
        if run.admitted_rpcs == 0 and run.pending_close is not None:
            rt.decisions.finalize(run, *run.pending_close)
            rt.commit()


_INVOCATIONS = itertools.count(1)


def _call(
    rt: Runtime, run: FlowRun, rpc: RpcDefinition, input: Any, snapshot: dict[str, Any]
) -> Generator[tuple[Any, tuple[Any, ...]], Any, tuple[InvocationContext, Any]]:
    where = f"Flow {run.flow_type!r}, RPC {rpc.name!r}"
    ctx = InvocationContext(
        run, None, "rpc", 1, snapshot, rt.codecs, where=where, rpc_name=rpc.name
    )
    ctx.rpc_options = rpc.options
    bound = getattr(run.definition.flow, rpc.method_name)
    timeout = rpc.options.timeout.total_seconds() if rpc.options.timeout else None
    try:
        args = (
            (ctx, rt.codecs.roundtrip(rpc.input_type, input, operation=f"{where} input"))
            if rpc.has_input
            else (ctx,)
        )
        if rt.sim is not None:
            return ctx, ((yield bound, args) if rpc.is_async else _call_sync(rt, bound, args))
        return ctx, _call_live(rt, bound, args, rpc.is_async, timeout)
    except TimeoutError:  # concurrent.futures.TimeoutError is TimeoutError
        ctx.canceled = True
        raise service_error(
            RequestTimeoutError,
            f"{where} timed out after {timeout:g} s",
            flow_id=run.flow_id,
            operation="invoke_rpc",
        ) from None
    except (Exception, *HANDLER_EXITS) as error:  # noqa: BLE001 - the caller gets it (R116)
        raise worker_error(
            f"{where} failed: {error_type_name(error)}: {error}",
            flow_id=run.flow_id,
            operation="invoke_rpc",
            error_type=error_type_name(error),
            error_detail=str(error),
        ) from error


def _call_sync(rt: Runtime, bound: Any, args: tuple[Any, ...]) -> Any:
    token = handler_clock.set(rt.clock_millis)
    try:
        return bound(*args)
    finally:
        handler_clock.reset(token)


def _call_live(
    rt: Runtime, bound: Any, args: tuple[Any, ...], is_async: bool, timeout: float | None
) -> Any:
    runner = rt.runner
    assert isinstance(runner, LiveRunner)
    if is_async:

        async def run() -> Any:
            handler_clock.set(rt.clock_millis)
            return await guard_exits(bound(*args))

        import asyncio  # live async RPCs only

        future = asyncio.run_coroutine_threadsafe(run(), runner.loop())
    else:
        future = runner.submit(_call_sync, rt, bound, args)
    return reraise_exit(future.result(timeout))


def _drive(rt: Runtime, bound: Any, args: tuple[Any, ...]) -> Any:
    context = contextvars.copy_context()
    context.run(handler_clock.set, rt.clock_millis)
    task = rt.loop.start_task(guard_exits(context.run(bound, *args)), context)
    while not task.done():
        if rt.run_unit() is None:
            task.cancel()
            raise RuntimeError(
                "the async RPC handler waits for something the simulation cannot provide"
            )
    return reraise_exit(task.result())


def _commit(
    rt: Runtime, run: FlowRun, rpc: RpcDefinition, ctx: InvocationContext, result: Any, input: Any
) -> Any:
    """Check an RPC's result, then apply its effects in one commit (R116, R117)."""
    output, next_steps, canceling = _unpack(run, rpc, result)
    _check_output(rt, run, rpc, output)
    staged = ctx.staged
    if ctx.canceled:
        raise RuntimeError(f"RPC {rpc.name!r} timed out; its result is discarded")
    if not (staged.writes or staged.publishes or staged.deletes or next_steps or canceling):
        if not rpc.is_transactional:
            if run.is_open:
                _record(rt, run, rpc, ctx, input, output, [], [], [], [])
                rt.commit()
            return output
    _check_applicable(run, rpc, ctx)
    _apply(rt, run, rpc, ctx, (input, output), next_steps, canceling)
    return output


def _unpack(
    run: FlowRun, rpc: RpcDefinition, result: Any
) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """(output, next_steps, canceling_steps) of an RPC result; a StepDecision is rejected."""
    if isinstance(result, StepDecision):
        raise worker_error(
            f"RPC {rpc.name!r} returned a StepDecision; an RPC cannot close, fail or dead-end "
            "the Flow — return RPCResult(output, next_steps=...) (R115)",
            flow_id=run.flow_id,
            operation="invoke_rpc",
            error_type="dexviz.sdk.errors.InvalidStepResultError",
            error_detail="an RPC returned a StepDecision",
        )
    if isinstance(result, RPCResult):
        return result.output, tuple(result.next_steps), tuple(result.canceling_steps)
    return result, (), ()


def _check_output(rt: Runtime, run: FlowRun, rpc: RpcDefinition, output: Any) -> None:
    """An output the dynamic encoding cannot encode fails the RPC; nothing is committed."""
    if output is None:
        return
    try:
        where = f"Flow {run.flow_type!r}, RPC {rpc.name!r} output"
        rt.codecs.roundtrip(Any, output, operation=where)
    except ValueMappingError as error:
        raise worker_error(
            str(error),
            flow_id=run.flow_id,
            operation="invoke_rpc",
            error_type=error_type_name(error),
            error_detail=str(error),
        ) from error


def _check_applicable(run: FlowRun, rpc: RpcDefinition, ctx: InvocationContext) -> None:
    """An RPC with effects needs an open run, and a transactional one needs its deletions."""
    if run.status is not FlowStatus.RUNNING:
        raise service_error(
            FlowNotActiveError,
            f"RPC {rpc.name!r} has effects but the Flow is closed",
            flow_id=run.flow_id,
            operation="invoke_rpc",
        )
    missing = check_deletes(run, ctx.staged) if rpc.is_transactional else None
    if missing is not None:
        raise service_error(
            ChannelMessageNotFoundError,
            f"RPC {rpc.name!r}: message {missing!r} is not pending",
            flow_id=run.flow_id,
            operation="invoke_rpc",
        )


def _apply(
    rt: Runtime,
    run: FlowRun,
    rpc: RpcDefinition,
    ctx: InvocationContext,
    call: tuple[Any, Any],
    next_steps: tuple[Any, ...],
    canceling: tuple[Any, ...],
) -> None:
    """Writes, publications, cancellations, then next Steps with lineage __rpc/<name>."""
    source = f"__rpc/{rpc.name}"
    # Once the Flow is closing, no new Step starts (R147): an admitted RPC's moves are dropped.
    moves = [rt.decisions.check_move(run, source, m) for m in next_steps] if run.is_open else []
    types = {run.definition.resolve_step(s).step_type for s in canceling}
    writes = apply_writes(run, ctx.staged)
    messages = apply_publishes(run, ctx.staged)
    apply_deletes(run, ctx.staged, strict=False)
    victims = rt.decisions.select_victims(run, "", types, set()) if run.is_open else []
    # Steps of one invocation are siblings; Steps of two invocations are not (R123).
    invocation = f"{source}#{next(_INVOCATIONS)}"
    new = [
        rt.decisions.new_execution(run, Move(m.step, m.input, m.options), source, None, invocation)
        for m in moves
    ]
    _record(rt, run, rpc, ctx, call[0], call[1], writes, messages, victims, new)
    emit_published(rt.recorder, run, messages, f"rpc:{rpc.name}")
    returned = rt.decisions.cancel_all(run, victims, f"rpc:{rpc.name}")
    for execution in new:
        rt.decisions.announce(run, execution, "rpc")
    rt.waits.wake(run, {m.channel for m in messages} | set(returned))
    rt.decisions.check_graceful(run)
    rt.commit()


def _record(
    rt: Runtime,
    run: FlowRun,
    rpc: RpcDefinition,
    ctx: InvocationContext,
    input: Any,
    output: Any,
    writes: list[Any],
    messages: list[Any],
    victims: list[Any],
    new: list[Any],
) -> None:
    rt.recorder.emit(
        run,
        EventKind.RPC_EXECUTION_COMPLETED,
        None,
        {
            "rpc": rpc.name,
            "input": to_json_ready(input),
            "output": to_json_ready(output),
            "writes": writes,
            "published": [m.message_id for m in messages],
            "next": [
                {
                    "step_type": e.step_type,
                    "execution_id": e.execution_id,
                    "input": to_json_ready(e.input),
                }
                for e in new
            ],
            "canceled": [v.execution_id for v in victims],
            "is_set_attribute_api": False,
            **staged_payload(ctx.staged),
        },
        method="rpc",
    )
