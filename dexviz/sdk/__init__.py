"""The authoring API, with dex-python-sdk 1.23's names and signatures (definitions only)."""

from typing import TYPE_CHECKING

from dexviz._lazy_exports import lazy_exports

if TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from dexviz.sdk.attribute import (
        Attribute,
        AttributeIndex,
        AttributeLock,
        AttributeMap,
        AttributeMapLoad,
        IndexType,
    )
    from dexviz.sdk.attribute_match import AttributeMatch
    from dexviz.sdk.channel import Channel, ChannelMap, ChannelMapLoad
    from dexviz.sdk.clock import current_time_millis
    from dexviz.sdk.codec import (
        BOOL,
        BYTES,
        DOUBLE,
        INT64,
        STRING,
        Codec,
        CodecRegistry,
        JsonCodec,
        Value,
        WireKind,
    )
    from dexviz.sdk.condition import ChannelCondition, Condition, SubFlowCondition, TimerCondition
    from dexviz.sdk.context import AsyncContext, Context
    from dexviz.sdk.decision import (
        DecisionKind,
        StepDecision,
        StepMovement,
        dead_end,
        force_complete,
        force_complete_if_channels_empty,
        force_fail,
        go_to,
        go_to_many,
        go_to_multi,
        graceful_complete,
    )
    from dexviz.sdk.errors import (
        AttributeMapNotLoadedError,
        ChannelMessageNotFoundError,
        ChannelMessagesNotLoadedError,
        DexServiceError,
        DexvizError,
        ErrorSubStatus,
        FlowAlreadyStartedError,
        FlowClosingError,
        FlowDefinitionError,
        FlowNotActiveError,
        FlowNotActiveOrNotFoundError,
        FlowNotFoundError,
        InvalidStepResultError,
        LongPollTimeoutError,
        RequestTimeoutError,
        RetryAfterError,
        RpcLockConflictError,
        SimulationLimitError,
        ValueMappingError,
        WaitHandlerTimeoutError,
        WorkerInvocationError,
        retry_after,
    )
    from dexviz.sdk.flow import Flow, PersistenceSchema, RPCResult, StepList, rpc
    from dexviz.sdk.flow_options import (
        ActiveStepSearchMode,
        ClientOptions,
        FlowConfig,
        FlowTimeoutHandlerOptions,
        FlowTimeoutPolicy,
        IdReusePolicy,
        RPCInvokeOptions,
        StartFlowOptions,
        StopFlowOptions,
        StopType,
        SubFlowOptions,
        SubFlowReusePolicy,
        TimeTravelOptions,
        TimeTravelStepMethod,
        TimeTravelType,
        WaitForAttributeOptions,
        WaitForStepCompletionOptions,
        WorkerOptions,
        WorkerTarget,
    )
    from dexviz.sdk.options import RetryPolicy, StepDurability, StepOptions, WaitForFailurePolicy
    from dexviz.sdk.registry import Registry
    from dexviz.sdk.results import (
        ChannelMessage,
        FlowErrorType,
        FlowInfo,
        FlowResult,
        FlowStatus,
        HealthInfo,
        RecoveryErrorInfo,
        SearchFlowEntry,
        SearchFlowsPage,
        StepCompletion,
    )
    from dexviz.sdk.step import Step
    from dexviz.sdk.step_output import StepOutput, heartbeat
    from dexviz.sdk.stream import Stream, StreamMessage, StreamMessagesPage
    from dexviz.sdk.subflow import SubFlow
    from dexviz.sdk.timer import StepExecutionId, Timer, TimerId
    from dexviz.sdk.wait import ConditionCombination, Wait, WaitKind

__all__ = [
    "BOOL",
    "BYTES",
    "DOUBLE",
    "INT64",
    "STRING",
    "ActiveStepSearchMode",
    "AsyncContext",
    "Attribute",
    "AttributeIndex",
    "AttributeLock",
    "AttributeMap",
    "AttributeMapLoad",
    "AttributeMatch",
    "AttributeMapNotLoadedError",
    "Channel",
    "ChannelCondition",
    "ChannelMap",
    "ChannelMapLoad",
    "ChannelMessage",
    "ChannelMessageNotFoundError",
    "ChannelMessagesNotLoadedError",
    "ClientOptions",
    "Codec",
    "CodecRegistry",
    "Condition",
    "ConditionCombination",
    "Context",
    "DecisionKind",
    "DexServiceError",
    "DexvizError",
    "ErrorSubStatus",
    "Flow",
    "FlowAlreadyStartedError",
    "FlowClosingError",
    "FlowConfig",
    "FlowDefinitionError",
    "FlowErrorType",
    "FlowInfo",
    "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError",
    "FlowNotFoundError",
    "FlowResult",
    "FlowStatus",
    "FlowTimeoutHandlerOptions",
    "FlowTimeoutPolicy",
    "HealthInfo",
    "IdReusePolicy",
    "IndexType",
    "InvalidStepResultError",
    "JsonCodec",
    "LongPollTimeoutError",
    "PersistenceSchema",
    "RPCInvokeOptions",
    "RPCResult",
    "RecoveryErrorInfo",
    "Registry",
    "RequestTimeoutError",
    "RetryAfterError",
    "RetryPolicy",
    "RpcLockConflictError",
    "SearchFlowEntry",
    "SearchFlowsPage",
    "SimulationLimitError",
    "StartFlowOptions",
    "Step",
    "StepCompletion",
    "StepDecision",
    "StepDurability",
    "StepExecutionId",
    "StepList",
    "StepMovement",
    "StepOptions",
    "StepOutput",
    "StopFlowOptions",
    "StopType",
    "Stream",
    "StreamMessage",
    "StreamMessagesPage",
    "SubFlow",
    "SubFlowCondition",
    "SubFlowOptions",
    "SubFlowReusePolicy",
    "TimeTravelOptions",
    "TimeTravelStepMethod",
    "TimeTravelType",
    "Timer",
    "TimerCondition",
    "TimerId",
    "Value",
    "ValueMappingError",
    "Wait",
    "WaitForAttributeOptions",
    "WaitForFailurePolicy",
    "WaitForStepCompletionOptions",
    "WaitHandlerTimeoutError",
    "WaitKind",
    "WireKind",
    "WorkerInvocationError",
    "WorkerOptions",
    "WorkerTarget",
    "current_time_millis",
    "dead_end",
    "force_complete",
    "force_complete_if_channels_empty",
    "force_fail",
    "go_to",
    "go_to_many",
    "go_to_multi",
    "graceful_complete",
    "heartbeat",
    "retry_after",
    "rpc",
]

_HOME = {
    "attribute": "Attribute AttributeIndex AttributeLock AttributeMap AttributeMapLoad IndexType",
    "attribute_match": "AttributeMatch",
    "channel": "Channel ChannelMap ChannelMapLoad",
    "clock": "current_time_millis",
    "codec": "BOOL BYTES DOUBLE INT64 STRING Codec CodecRegistry JsonCodec Value WireKind",
    "condition": "ChannelCondition Condition SubFlowCondition TimerCondition",
    "context": "AsyncContext Context",
    "decision": (
        "DecisionKind StepDecision StepMovement dead_end force_complete "
        "force_complete_if_channels_empty force_fail go_to go_to_many go_to_multi "
        "graceful_complete"
    ),
    "errors": (
        "AttributeMapNotLoadedError ChannelMessageNotFoundError "
        "ChannelMessagesNotLoadedError DexServiceError DexvizError ErrorSubStatus "
        "FlowAlreadyStartedError FlowClosingError FlowDefinitionError FlowNotActiveError "
        "FlowNotActiveOrNotFoundError FlowNotFoundError InvalidStepResultError "
        "LongPollTimeoutError RequestTimeoutError RetryAfterError RpcLockConflictError "
        "SimulationLimitError ValueMappingError WaitHandlerTimeoutError "
        "WorkerInvocationError retry_after"
    ),
    "flow": "Flow PersistenceSchema RPCResult StepList rpc",
    "flow_options": (
        "ActiveStepSearchMode ClientOptions FlowConfig FlowTimeoutHandlerOptions "
        "FlowTimeoutPolicy IdReusePolicy RPCInvokeOptions StartFlowOptions "
        "StopFlowOptions StopType SubFlowOptions SubFlowReusePolicy TimeTravelOptions "
        "TimeTravelStepMethod TimeTravelType WaitForAttributeOptions "
        "WaitForStepCompletionOptions WorkerOptions WorkerTarget"
    ),
    "options": "RetryPolicy StepDurability StepOptions WaitForFailurePolicy",
    "registry": "Registry",
    "results": (
        "ChannelMessage FlowErrorType FlowInfo FlowResult FlowStatus HealthInfo "
        "RecoveryErrorInfo SearchFlowEntry SearchFlowsPage StepCompletion"
    ),
    "step": "Step",
    "step_output": "StepOutput heartbeat",
    "stream": "Stream StreamMessage StreamMessagesPage",
    "subflow": "SubFlow",
    "timer": "StepExecutionId Timer TimerId",
    "wait": "ConditionCombination Wait WaitKind",
}
"""Each public module of the package and the names it defines, space-separated."""

__getattr__, __dir__ = lazy_exports(globals(), _HOME)
