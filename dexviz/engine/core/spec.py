"""The Flow spec recorded at start, and Flow id checks."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dexviz.sdk.attribute import AttributeMap
from dexviz.sdk.channel import ChannelMap
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.definitions import FlowDefinition

if TYPE_CHECKING:
    from dexviz.engine.core.state import FlowRun


def flow_spec(definition: FlowDefinition) -> dict[str, Any]:
    """The Flow's description recorded at start (docs/history-format.md)."""
    cls = type(definition.flow)
    source = _relative_source(cls)
    return {
        "flow_type": definition.flow_type,
        "start_step": definition.start.step_type if definition.start else None,
        "steps": [
            {
                "step_type": s.step_type,
                "has_wait_for": s.has_wait_for,
                "description": ((type(s.step).__doc__ or "").strip().splitlines() or [""])[0],
                "execute_failure_proceed_to": _route(definition, s),
            }
            for s in definition.steps.values()
        ],
        "channels": [
            {
                "name": c.name,
                "kind": "channel_map" if isinstance(c, ChannelMap) else "channel",
                "value_type": _type_label(c.value_type),
            }
            for c in definition.channels.values()
        ],
        "attributes": [
            {
                "name": a.name,
                "kind": "attribute_map" if isinstance(a, AttributeMap) else "attribute",
                "value_type": _type_label(a.value_type),
            }
            for a in definition.attributes.values()
        ],
        "rpcs": sorted(definition.rpcs),
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "source_file": source,
    }


def _route(definition: FlowDefinition, step: Any) -> str | None:
    target = step.options.execute_failure_proceed_to if step.options else None
    return definition.resolve_step(target).step_type if target is not None else None


def _type_label(value_type: Any) -> str:
    if isinstance(value_type, type):
        return value_type.__name__
    return str(value_type).replace("typing.", "")


def check_flow_id(flow_id: str, *, generated: bool = False) -> None:
    """Reject an empty Flow id or one with ``/``, ``$`` or ``:`` (R9).

    The ``SubFlow:`` prefix is reserved for the child ids the engine generates (R131); a client
    that chose one could pre-start a child that a parent would then adopt.
    """
    if not isinstance(flow_id, str) or not flow_id:
        raise ValueError(f"a Flow id must be a non-empty string, got {flow_id!r}")
    if flow_id.startswith("SubFlow:") and not generated:
        raise ValueError(
            f"Flow id {flow_id!r} is reserved: the 'SubFlow:' prefix names the child Flows "
            "that SubFlow conditions start (R9, R131)"
        )
    bad = [c for c in "/$:" if c in flow_id and not flow_id.startswith("SubFlow:")]
    if bad:
        raise ValueError(f"Flow id {flow_id!r} must not contain {' or '.join(bad)} (R9)")


_SOURCES: dict[type, str | None] = {}
"""``_relative_source`` by class: every engine records it at its first start of the Flow, and
finding the file (``inspect.getsourcefile``) costs more than the rest of the spec."""


def _relative_source(cls: type) -> str | None:
    """The defining file relative to its import root (kept per class, see ``_SOURCES``)."""
    try:
        return _SOURCES[cls]
    except KeyError:
        pass
    if len(_SOURCES) >= 256:  # classes made anew (a notebook cell run again): keep a few
        _SOURCES.clear()
    found = _SOURCES[cls] = _source_of(cls)
    return found


def _source_of(cls: type) -> str | None:
    """The defining file relative to its import root, so histories match across checkouts."""
    try:
        found = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    if found is None:
        return None
    # A file name that is not UTF-8 is recorded with its odd bytes as \xNN (a history is UTF-8).
    path = Path(os.fsencode(found).decode("utf-8", "backslashreplace"))
    depth = len(cls.__module__.split(".")) + (path.stem == "__init__")
    if cls.__module__ == "__main__" or depth > len(path.parts) - 1:
        return path.name
    return Path(*path.parts[-depth:]).as_posix()


def continued_start_payload(
    run: FlowRun,
    previous_run_id: str,
    *,
    mode: str,
    seed: int | None,
    timeout: dict[str, Any],
    reason: str | None = None,
) -> dict[str, Any]:
    """FlowStartedOrContinued of a run that continues another (time travel, continue-as-new).

    It records the Attributes and queued messages the new run starts from, so a later fork or
    recovery of that run can fold them; ``timeout`` holds ``timeout_s`` and ``timeout_policy``.
    """
    return {
        "flow": flow_spec(run.definition),
        "continued": True,
        **({"reason": reason} if reason is not None else {}),
        "previous_run_id": previous_run_id,
        "input": None,
        "start_execution_id": None,
        "initial_attributes": [
            {"attribute": k, "value": to_json_ready(v)} for k, v in sorted(run.attributes.items())
        ],
        "pending_messages": [
            {"channel": m.channel, "message_id": m.message_id, "value": to_json_ready(m.value)}
            for queue in run.queues_view.values()
            for m in queue
        ],
        "mode": mode,
        "seed": seed,
        **timeout,
    }
