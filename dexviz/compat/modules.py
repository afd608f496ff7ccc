"""The ``dex`` package layout: which Dex names each ``dex`` submodule holds, resolved to dexviz.

The table follows dex-python-sdk's own module layout (1.23) plus the names the 0.2 generation
kept elsewhere (``go_to_multi`` in ``dex.step``, ``WorkerOptions`` in ``dex.worker``, …), so both
generations' ``from dex.<module> import <name>`` lines resolve. A name is looked up by its Dex
name, first among the compat objects (Worker, Client, blob cache), then in ``dexviz.sdk`` and the
SDK modules that hold Dex names it does not re-export: when the SDK layer gains a Dex name,
``dex`` exposes it without a change to the table.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType

PACKAGE = "dex"
"""The top-level package name the compat layer provides."""

_STEP_NAMES = (
    "StepOutput",
    "heartbeat",
    "StepDurability",
    "WaitForFailurePolicy",
    "RetryPolicy",
    "StepOptions",
    "Step",
    "StepList",
    "StepMovement",
    "DecisionKind",
    "StepDecision",
    "go_to",
    "go_to_many",
    "go_to_multi",
    "graceful_complete",
    "force_complete",
    "force_complete_if_channels_empty",
    "force_fail",
    "dead_end",
)
_ERROR_NAMES = (
    "ErrorSubStatus",
    "FlowErrorType",
    "DexServiceError",
    "FlowAlreadyStartedError",
    "FlowClosingError",
    "FlowNotFoundError",
    "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError",
    "WorkerInvocationError",
    "RpcLockConflictError",
    "LongPollTimeoutError",
    "RequestTimeoutError",
    "ChannelMessageNotFoundError",
    "WaitHandlerTimeoutError",
    "FlowDefinitionError",
    "AttributeMapNotLoadedError",
    "ChannelMessagesNotLoadedError",
    "InvalidStepResultError",
    "ValueMappingError",
)
_FLOW_OPTION_NAMES = (
    "IdReusePolicy",
    "FlowTimeoutPolicy",
    "FlowTimeoutHandlerOptions",
    "StartFlowOptions",
    "SubFlowReusePolicy",
    "SubFlowOptions",
    "TimeTravelType",
    "TimeTravelStepMethod",
    "TimeTravelOptions",
    "StopType",
    "StopFlowOptions",
)

SUBMODULES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "_grpc_errors": ("RetryAfterError", "retry_after"),
        "async_client": ("AsyncClient",),
        "async_worker": ("AsyncWorker",),
        "attribute": (
            "AttributeMapLoad",
            "IndexType",
            "AttributeIndex",
            "Attribute",
            "AttributeMap",
            "AttributeLock",
        ),
        "attribute_match": ("AttributeMatch",),
        "blob_cache": ("BlobCacheConfig", "BlobCache", "open_blob_cache"),
        "channel": ("ChannelMapLoad", "ChannelMessage", "Channel", "ChannelMap"),
        "client": ("Client",),
        "client_options": ("ClientOptions",),
        "codec": (
            "WireKind",
            "Value",
            "Codec",
            "STRING",
            "BOOL",
            "INT64",
            "DOUBLE",
            "BYTES",
            "JsonCodec",
            "CodecRegistry",
        ),
        "condition": (
            "Condition",
            "TimerCondition",
            "ChannelCondition",
            "SubFlowCondition",
            "ConditionCombination",
        ),
        "context": ("RecoveryErrorInfo", "Context", "AsyncContext"),
        "credential": ("Credential", "FileCredential", "ApiKeyExchangeError", "ApiKeyCredential"),
        "flow": ("rpc", "RPCResult", "PersistenceSchema", "Flow", "Registry", "StepList"),
        "flow_config": ("ActiveStepSearchMode", "FlowConfig"),
        "flow_info": ("FlowStatus", "FlowInfo", "HealthInfo", "SearchFlowEntry", "SearchFlowsPage"),
        "flow_options": _FLOW_OPTION_NAMES,
        "flow_result": ("StepCompletion", "FlowResult"),
        "pull_registration": (
            "PullRegistrationError",
            "PullQueueRegistrationState",
            "PullRegistrationState",
        ),
        "rpc_invoke_options": ("RPCInvokeOptions",),
        "runtime_errors": _ERROR_NAMES,
        "step": _STEP_NAMES,
        "step_execution": ("StepExecutionId", "TimerId"),
        "stream": (
            "Stream",
            "StreamMessage",
            "StreamMessagesPage",
            "AsyncBufferedTextStream",
            "BufferedTextStream",
        ),
        "subflow": ("SubFlow",),
        "timer": ("Timer", "TimerId", "StepExecutionId"),
        "wait": ("WaitKind", "Wait", "ConditionCombination"),
        "wait_options": ("WaitForStepCompletionOptions", "WaitForAttributeOptions"),
        "worker": ("Worker", "AsyncWorker", "WorkerOptions", "WorkerTarget"),
        "worker_options": ("WorkerTarget", "PullWorkerOptions", "WorkerOptions"),
    }
)
"""Each ``dex.<submodule>`` and the Dex names it holds (1.23's layout plus 0.2's extras)."""

_NOT_AT_TOP = frozenset(
    {
        "DecisionKind",
        "WaitKind",
        "Condition",
        "TimerCondition",
        "ChannelCondition",
        "SubFlowCondition",
    }
)


def _top_level_names() -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for names in SUBMODULES.values():
        for name in names:
            if name not in _NOT_AT_TOP:
                seen.setdefault(name, None)
    return tuple(seen)


TOP_LEVEL: tuple[str, ...] = _top_level_names()
"""The names ``dex`` itself exports: every submodule name except the not-exported kinds."""

_SOURCES = ("dexviz.compat", "dexviz.sdk", "dexviz.sdk.errors", "dexviz.sdk.attribute_match")


def module_names(fullname: str) -> tuple[str, ...] | None:
    """The Dex names of module ``fullname`` (``dex`` or ``dex.<sub>``); None if Dex has none."""
    if fullname == PACKAGE:
        return TOP_LEVEL
    prefix, _, sub = fullname.partition(".")
    if prefix != PACKAGE or "." in sub:
        return None
    return SUBMODULES.get(sub)


def resolve(names: tuple[str, ...]) -> tuple[dict[str, object], tuple[str, ...]]:
    """Look Dex names up in dexviz; return ``(found objects by name, names dexviz lacks)``."""
    sources = [importlib.import_module(source) for source in _SOURCES]
    found: dict[str, object] = {}
    missing: list[str] = []
    for name in names:
        for source in sources:
            # getattr, not the module dict: dexviz.sdk binds its public names on first use.
            value = getattr(source, name, None)
            if value is not None:
                found[name] = value
                break
        else:
            missing.append(name)
    return found, tuple(missing)
