"""dexviz: Dex in a notebook — an in-process Dex engine with views of what it ran.

The authoring API keeps dex-python-sdk's names (``from dexviz import Flow, Step, go_to``);
``simulate`` and ``Engine`` run Flows on a deterministic virtual clock; every view reads the
History the engine records. Views that need graphviz, matplotlib or pandas load them lazily.

Every public name is resolved on first use (PEP 562), so ``import dexviz`` costs almost
nothing and ``import dexviz.history`` does not pull the engine in.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time every name is lazy (views stay Any)
    from dexviz.compare import ReplayCheck as ReplayCheck
    from dexviz.compare import RunDiff as RunDiff
    from dexviz.compare import diff as diff
    from dexviz.compare import replay_check as replay_check
    from dexviz.engine import CancelExecution as CancelExecution
    from dexviz.engine import Client as Client
    from dexviz.engine import Engine as Engine
    from dexviz.engine import FailAttempt as FailAttempt
    from dexviz.engine import FaultPlan as FaultPlan
    from dexviz.engine import FlowState as FlowState
    from dexviz.engine import MemoryStore as MemoryStore
    from dexviz.engine import SimulationRun as SimulationRun
    from dexviz.engine import SQLiteStore as SQLiteStore
    from dexviz.engine import Store as Store
    from dexviz.engine import simulate as simulate
    from dexviz.history import Event as Event
    from dexviz.history import EventKind as EventKind
    from dexviz.history import History as History
    from dexviz.history import HistoryFormatError as HistoryFormatError
    from dexviz.history.dex_history import from_dex as from_dex
    from dexviz.sdk import *  # noqa: F403 - the SDK's names are dexviz's names
    from dexviz.server import connect as connect

__version__ = "0.1.0"

_SDK_NAMES = (
    "BOOL", "BYTES", "DOUBLE", "INT64", "STRING", "ActiveStepSearchMode", "AsyncContext",
    "Attribute", "AttributeIndex", "AttributeLock", "AttributeMap", "AttributeMapLoad",
    "AttributeMapNotLoadedError", "AttributeMatch", "Channel", "ChannelCondition", "ChannelMap",
    "ChannelMapLoad", "ChannelMessage", "ChannelMessageNotFoundError",
    "ChannelMessagesNotLoadedError", "ClientOptions", "Codec", "CodecRegistry", "Condition",
    "ConditionCombination", "Context", "DecisionKind", "DexServiceError", "DexvizError",
    "ErrorSubStatus", "Flow", "FlowAlreadyStartedError", "FlowClosingError", "FlowConfig",
    "FlowDefinitionError", "FlowErrorType", "FlowInfo", "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError", "FlowNotFoundError", "FlowResult", "FlowStatus",
    "FlowTimeoutHandlerOptions", "FlowTimeoutPolicy", "HealthInfo", "IdReusePolicy", "IndexType",
    "InvalidStepResultError", "JsonCodec", "LongPollTimeoutError", "PersistenceSchema",
    "RPCInvokeOptions", "RPCResult", "RecoveryErrorInfo", "Registry", "RequestTimeoutError",
    "RetryAfterError", "RetryPolicy", "RpcLockConflictError", "SearchFlowEntry",
    "SearchFlowsPage", "SimulationLimitError", "StartFlowOptions", "Step", "StepCompletion",
    "StepDecision", "StepDurability", "StepExecutionId", "StepList", "StepMovement",
    "StepOptions", "StepOutput", "StopFlowOptions", "StopType", "Stream", "StreamMessage",
    "StreamMessagesPage", "SubFlow", "SubFlowCondition", "SubFlowOptions", "SubFlowReusePolicy",
    "TimeTravelOptions", "TimeTravelStepMethod", "TimeTravelType", "Timer", "TimerCondition",
    "TimerId", "Value", "ValueMappingError", "Wait", "WaitForAttributeOptions",
    "WaitForFailurePolicy", "WaitForStepCompletionOptions", "WaitHandlerTimeoutError", "WaitKind",
    "WireKind", "WorkerInvocationError", "WorkerOptions", "WorkerTarget", "current_time_millis",
    "dead_end", "force_complete", "force_complete_if_channels_empty", "force_fail", "go_to",
    "go_to_many", "go_to_multi", "graceful_complete", "heartbeat", "retry_after", "rpc",
)  # fmt: skip
"""The SDK's names (``dexviz.sdk.__all__``; a test keeps the two lists equal)."""

_ENGINE_NAMES = (
    "CancelExecution", "Client", "Engine", "FailAttempt", "FaultPlan", "FlowState",
    "MemoryStore", "SQLiteStore", "SimulationRun", "Store", "simulate",
)  # fmt: skip
_HISTORY_NAMES = ("Event", "EventKind", "History", "HistoryFormatError")

_DEX_NAMES = {"from_dex": "dexviz.history.dex_history", "connect": "dexviz.server"}
"""Reading runs recorded by a Dex server: from a JSON file, or over gRPC."""

_VIEWS = {
    "definition_graph": "dexviz.viz.definition_view",
    "execution_graph": "dexviz.viz.execution_view",
    "timeline": "dexviz.viz.timeline",
    "frames": "dexviz.viz.frames",
    "exclusive_sections": "dexviz.analysis.exclusive",
    "concurrency": "dexviz.analysis.concurrency",
    "critical_path": "dexviz.analysis.critical_path",
    "state_at": "dexviz.analysis.state",
    "Debugger": "dexviz.widgets.debugger",
    "explore": "dexviz.explore",
    "diff": "dexviz.compare",
    "replay_check": "dexviz.compare",
    "RunDiff": "dexviz.compare",
    "ReplayCheck": "dexviz.compare",
}

_LAZY: dict[str, str] = {
    **dict.fromkeys(_SDK_NAMES, "dexviz.sdk"),
    **dict.fromkeys(_ENGINE_NAMES, "dexviz.engine"),
    **dict.fromkeys(_HISTORY_NAMES, "dexviz.history"),
    **_DEX_NAMES,
    **_VIEWS,
}


def __getattr__(name: str) -> Any:
    """Resolve a public name on first use and keep it, so later lookups are plain globals."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'dexviz' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names with the lazy ones, so they tab-complete before first use."""
    return sorted({*globals(), *_LAZY})


__all__ = [*_SDK_NAMES, *_ENGINE_NAMES, *_HISTORY_NAMES, *sorted(_DEX_NAMES), *sorted(_VIEWS)]
