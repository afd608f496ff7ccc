"""Describing a suspended coroutine handler, so that a state with one in flight can be merged.

An engine snapshot keeps a suspended handler as the trace that rebuilds it
(:mod:`dexviz.engine.coroutine_replay`), and a restored one is re-driven to the same frame; the
stateful search also needs to tell whether two states are the same. A suspended handler is
described by its chain of awaiting frames: each frame's code, the instruction it is suspended
at, and its local variables; the awaited future at the bottom (done or not); and its attempt's
context, by what it has staged so far. The Step object, the context and the loop are named by
their role, never by address. Asyncio callbacks queued on the scheduler are described by the
executions whose Tasks they resume. Whatever cannot be described this way (a local whose repr
names an address, an awaitable of another kind) makes the state opaque: it is then never merged.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
from collections.abc import Mapping
from types import CoroutineType
from typing import Any

from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.runners import DeferredCall
from dexviz.explore.owners import tasks_of
from dexviz.sdk.context import Context
from dexviz.sdk.step import Step

__all__ = ["describe_callback", "describe_context", "describe_task"]

MAX_FRAMES = 32
"""Awaiting frames followed down one Task: deeper chains are opaque."""


class CoroutineOpaque(Exception):
    """A part of a coroutine that cannot be described soundly."""


def describe_context(context: Context) -> tuple[Any, ...]:
    """An attempt's context: whether it was canceled and what it has staged so far."""
    staged: Any = None
    if not getattr(context, "stages_nothing", True):
        found: Any = getattr(context, "staged")  # noqa: B009 - an engine context's, not the SDK's
        staged = (
            found.publishes, dict(found.writes), list(found.deletes), dict(found.locals),
            dict(found.events),
        )  # fmt: skip
    return ("context", getattr(context, "canceled", None), staged)


_BUILTIN = frozenset({str, int, float, bool, bytes, type(None), tuple, list, dict, set, frozenset})
"""Local values of these exact types are shown as they are (none is a Step, Context, ...)."""


def _coroutine_state(coroutine: Any) -> str:
    """``inspect.getcoroutinestate`` of a coroutine object, without the call through inspect."""
    if coroutine.cr_running:
        return inspect.CORO_RUNNING
    if coroutine.cr_suspended:
        return inspect.CORO_SUSPENDED
    if coroutine.cr_frame is None:
        return inspect.CORO_CLOSED
    return inspect.CORO_CREATED


_STEP, _CONTEXT, _LOOP, _FUTURE, _TIMER, _HANDLE, _COROUTINE, _CALLABLE, _PLAIN = range(9)
_KINDS: dict[type, int] = {}
"""Which branch of ``_local`` each type takes, asked once per type (see ``_kind``)."""
_KINDS_TOKEN: list[object] = [abc.get_cache_token()]


def _kind_of(value: Any) -> int:
    # In the order ``_local`` tells them apart: the first that holds.
    if isinstance(value, Step):
        return _STEP
    if isinstance(value, Context):
        return _CONTEXT
    if isinstance(value, asyncio.AbstractEventLoop):
        return _LOOP
    if isinstance(value, asyncio.Future):
        return _FUTURE
    if isinstance(value, asyncio.TimerHandle):
        return _TIMER
    if isinstance(value, asyncio.Handle):
        return _HANDLE
    if isinstance(value, CoroutineType):  # inspect.iscoroutine
        return _COROUTINE
    if callable(value) and not isinstance(value, type):
        return _CALLABLE
    return _PLAIN


def _kind(value: Any) -> int:
    """``_kind_of(value)``, kept by type.

    Each test depends on the type alone (its MRO, its ``__call__``) unless an ABC registers
    a new subclass, which changes ``abc.get_cache_token()`` (the kept kinds are then
    dropped), or the value claims another ``__class__`` (then it is asked afresh).
    """
    kind = type(value)
    if value.__class__ is not kind:
        return _kind_of(value)
    token = abc.get_cache_token()
    if token is not _KINDS_TOKEN[0] and token != _KINDS_TOKEN[0]:
        _KINDS.clear()
        _KINDS_TOKEN[0] = token
    found = _KINDS.get(kind)
    if found is None:
        if len(_KINDS) >= 10_000:
            _KINDS.clear()
        found = _KINDS[kind] = _kind_of(value)
    return found


def _local(value: Any) -> Any:
    """A local variable as the state sees it."""
    if type(value) in _BUILTIN:
        return value
    kind = _kind(value)
    if kind == _PLAIN:
        return value
    if kind == _STEP:
        return ("step", type(value).__qualname__)
    if kind == _CONTEXT:
        return describe_context(value)
    if kind == _LOOP:
        return ("loop",)
    if kind == _FUTURE:
        return ("future", value.done(), value.cancelled())
    if kind == _TIMER:
        return ("timer", value.when(), value.cancelled())
    if kind == _HANDLE:
        return ("handle", value.cancelled())
    if kind == _COROUTINE:
        # Described in full where it is awaited (the next frame of the chain).
        frame = value.cr_frame
        return ("coroutine", value.cr_code.co_qualname, _coroutine_state(value),
                None if frame is None else frame.f_lasti)  # fmt: skip
    raise CoroutineOpaque(type(value).__qualname__)


def describe_task(task: asyncio.Task[Any]) -> tuple[Any, ...]:
    """A suspended handler's frames, from the handler down to the future it awaits."""
    frames: list[Any] = []
    awaited: Any = task.get_coro()
    for _ in range(MAX_FRAMES):
        if type(awaited) is not CoroutineType and isinstance(awaited, DeferredCall):
            if awaited.coroutine is None:
                # Not called yet: its Task's first step calls the handler with its input.
                frames.append(("deferred", awaited.__name__, awaited.started))
                return tuple(frames)
            awaited = awaited.coroutine
            continue
        if not isinstance(awaited, CoroutineType):  # inspect.iscoroutine
            if awaited is not None:
                frames.append(("awaiting", type(awaited).__qualname__))
            return tuple(frames)
        frame = awaited.cr_frame
        state = _coroutine_state(awaited)
        if frame is None:
            frames.append((awaited.cr_code.co_qualname, state))
            return tuple(frames)
        local = tuple([(k, _local(v)) for k, v in frame.f_locals.items()])
        frames.append((awaited.cr_code.co_qualname, state, frame.f_lasti, local))
        awaited = awaited.cr_await
    raise CoroutineOpaque("a chain of awaits deeper than MAX_FRAMES")


def describe_callback(
    callback: LoopCallback, owners: Mapping[asyncio.Task[Any], str]
) -> tuple[Any, ...]:
    """An asyncio callback: the executions whose Tasks it resumes, and whether it is live.

    A Task that has finished is given with its outcome: the callback delivers it.
    """
    handle = callback.handle
    found = []
    for task in tasks_of(handle):
        owner = owners.get(task)
        if owner is None:
            raise CoroutineOpaque("an asyncio callback of no handler")
        found.append((owner, _outcome(task)) if task.done() else (owner,))
    if not found:
        raise CoroutineOpaque("an asyncio callback of no handler")
    return ("async", tuple(sorted(found)), handle.cancelled())


def _outcome(task: asyncio.Task[Any]) -> Any:
    if task.cancelled():
        return ("cancelled",)
    error = task.exception()
    if error is not None:
        return ("raised", type(error).__qualname__, str(error))
    return ("returned", _local(task.result()))
