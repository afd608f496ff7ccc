"""Named pickling of engine state: what belongs to the Flows or the engine goes as a name.

A snapshot's pickle must not copy the Registry, the FlowDefinitions and StepDefinitions, the
Step objects, their options, the Channels, Attributes and RPCs, or the engine's own services:
they belong to the Flows and to the engine, not to the run. :class:`NamedPickler` writes each
of them as a name (``("step", flow_type, step_type)``, ``("service", "waits")``, ...), and
:class:`NamedUnpickler` resolves those names in the engine that restores the snapshot, so a
snapshot restores into a new engine of the same Flows, in this process or another.

One engine value is written as a name although it is the run's: the ended Task that an
execution keeps after its coroutine's outcome was dropped (the execution was canceled, or its
Flow closed, while the handler was in flight: ``Invoker.finished`` returns before it clears
``ex.task``). Such a Task is never run again and the engine only asks whether it is done, so
it is written as ``("constant", ...)`` of :data:`ENDED_TASK`, which answers the same. (A Task
still in flight never gets here: the snapshot holds it as a trace, see
:mod:`dexviz.engine.coroutine_replay`.)
"""

from __future__ import annotations

import asyncio
import io
import pickle
from typing import TYPE_CHECKING, Any

from dexviz.engine.attempt.step_settings import StepSettings
from dexviz.engine.commit.decide import DEFAULT_OPTIONS

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime

_SERVICES = (
    "invoker", "waits", "fast", "decisions", "subflows", "timeouts", "starts", "time_travel",
    "continue_as_new", "recorder", "scheduler", "store", "streams", "registry", "codecs",
    "runner", "chooser", "faults",
)  # fmt: skip
"""Runtime attributes that are services of the engine: named in a snapshot, never copied."""


class EndedTask:
    """What an ended coroutine Task left on its execution is restored as (see the module).

    The engine reads such a Task only through ``done()`` (true) and ``cancel()`` (nothing to
    cancel); ``ex.task is None`` stays false, as it is for the Task it stands for.
    """

    __slots__ = ()

    def done(self) -> bool:
        """Always: the Task it stands for had ended when the snapshot was taken."""
        return True

    def cancel(self, msg: Any = None) -> bool:
        """Nothing to cancel, as for an ended Task."""
        del msg
        return False

    def __repr__(self) -> str:
        return "EndedTask()"


ENDED_TASK = EndedTask()
"""The one stand-in for every ended Task of a restored snapshot."""


def _constants() -> tuple[Any, ...]:
    """Shared module-level values the state may point at: named, so they stay shared."""
    from dexviz.engine.core import context, state

    return (DEFAULT_OPTIONS, state._NO_QUEUES, context._NOTHING, ENDED_TASK)


def _names(rt: Runtime) -> dict[int, tuple[Any, ...]]:
    """The objects a snapshot names instead of copying, by ``id``, with their names."""
    names: dict[int, tuple[Any, ...]] = {id(rt): ("runtime",)}
    for index, constant in enumerate(_constants()):
        names[id(constant)] = ("constant", index)
    for service in _SERVICES:
        value = getattr(rt, service, None)
        if value is not None:
            names.setdefault(id(value), ("service", service))
    for definition in rt.registry.definitions:
        flow_type = definition.flow_type
        names[id(definition)] = ("flow", flow_type)
        names[id(definition.flow)] = ("flow-object", flow_type)
        for step_type, step in definition.steps.items():
            names[id(step)] = ("step", flow_type, step_type)
            names[id(step.step)] = ("step-object", flow_type, step_type)
            if step.options is not None:
                names.setdefault(id(step.options), ("step-options", flow_type, step_type))
        for kind, table in (("channel", definition.channels), ("attribute", definition.attributes),
                            ("rpc", definition.rpcs)):  # fmt: skip
            for name, value in table.items():
                names.setdefault(id(value), (kind, flow_type, name))
    return names


def _resolve(rt: Runtime, name: tuple[Any, ...]) -> Any:
    """The object of ``rt`` that ``name`` (from ``_names`` of another engine) stands for."""
    kind = name[0]
    if kind == "runtime":
        return rt
    if kind == "constant":
        return _constants()[name[1]]
    if kind == "service":
        return getattr(rt, name[1])
    definition = rt.registry.definition(name[1])
    if kind == "flow":
        return definition
    if kind == "flow-object":
        return definition.flow
    if kind == "settings":
        return rt.fast.settings(definition.steps[name[2]])
    if kind in ("step", "step-object", "step-options"):
        step = definition.steps[name[2]]
        return {"step": step, "step-object": step.step, "step-options": step.options}[kind]
    if kind == "channel":
        return definition.channels[name[2]]
    if kind == "attribute":
        return definition.attributes[name[2]]
    return definition.rpcs[name[2]]


class NamedPickler(pickle.Pickler):
    """Pickles engine state with the Flows' and the engine's objects of ``rt`` as names."""

    def __init__(self, file: io.BytesIO, rt: Runtime) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self._names = _names_of(rt)

    def persistent_id(self, obj: Any) -> Any:
        """The name ``obj`` is written as, or None to pickle it as usual."""
        found = self._names.get(id(obj))
        if found is not None:
            return found
        if type(obj) is StepSettings:
            step = self._names.get(id(obj.step))
            if step is not None:
                return ("settings", *step[1:])
        if isinstance(obj, asyncio.Task) and obj.done():
            return self._names[id(ENDED_TASK)]
        return None


class NamedUnpickler(pickle.Unpickler):
    """Reads what :class:`NamedPickler` wrote, resolving the names in ``rt``."""

    def __init__(self, file: io.BytesIO, rt: Runtime) -> None:
        super().__init__(file)
        self._rt = rt

    def persistent_load(self, pid: Any) -> Any:
        """The object of this engine that the name ``pid`` stands for."""
        return _resolve(self._rt, pid)


def _names_of(rt: Runtime) -> dict[int, tuple[Any, ...]]:
    """``_names(rt)``, worked out once per runtime (its Flows and services do not change)."""
    cached = rt.snapshot_names
    if cached is None:
        cached = _names(rt)
        rt.snapshot_names = cached
    return cached
