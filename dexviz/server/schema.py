"""The messages of ``dex.FlowService``'s history calls, written down from the wire facts.

Each message maps a field number to its JSON name, its type and its label. Types are the
protobuf scalar names, ``enum``, ``Timestamp``, ``Duration``, ``Any`` or another message's
name here; labels are ``""`` (singular), ``"*"`` (repeated) or ``"map"`` (a map with string
keys). A field missing here is skipped when decoding, as protobuf skips unknown fields.
"""

from __future__ import annotations

__all__ = ["HISTORY_PAYLOADS", "MESSAGES", "Field"]

Field = tuple[str, str, str]
"""(JSON name, type, label)."""

_VALUE = "Value"
_KV: dict[int, Field] = {1: ("key", "string", ""), 2: ("value", _VALUE, "")}
_RETRY: dict[int, Field] = {
    1: ("initialIntervalSeconds", "int32", ""), 2: ("backoffCoefficient", "float", ""),
    3: ("maximumIntervalSeconds", "int32", ""), 4: ("maximumAttempts", "int32", ""),
    5: ("totalDurationSeconds", "int32", ""),
}  # fmt: skip
_STEP_OPTIONS: dict[int, Field] = {
    1: ("waitForTimeoutSeconds", "int32", ""), 2: ("executeTimeoutSeconds", "int32", ""),
    3: ("waitForRetryPolicy", "RetryPolicy", ""), 4: ("executeRetryPolicy", "RetryPolicy", ""),
    5: ("waitForFailurePolicy", "enum", ""), 6: ("executeFailurePolicy", "enum", ""),
    7: ("executeFailureProceedStepType", "string", ""),
    8: ("executeFailureProceedStepOptions", "StepOptions", ""), 9: ("skipWaitFor", "bool", ""),
    10: ("waitForDurabilityOverride", "enum", ""), 11: ("executeDurabilityOverride", "enum", ""),
    12: ("waitForLockAttributeKeys", "string", "*"),
    13: ("executeLockAttributeKeys", "string", "*"), 14: ("heartbeatTimeoutSeconds", "int32", ""),
}  # fmt: skip
_STEP_METHOD_OUTPUT: dict[int, Field] = {
    2: ("upsertAttributes", "AttributeWrite", "*"), 3: ("publishToChannel", "ChannelMessage", "*"),
    4: ("recordEvents", "KV", "*"), 5: ("upsertStepExecutionLocals", "KV", "*"),
    6: ("deleteFromChannel", "ChannelMessageDeletion", "*"),
}  # fmt: skip
_METHOD_EVENT: dict[int, Field] = {
    1: ("input", "StepMethodEventInput", ""), 3: ("context", "StepMethodEventContext", ""),
}

HISTORY_PAYLOADS: dict[int, tuple[str, str]] = {
    20: ("flowStartedOrContinued", "FlowStartedOrContinued"), 21: ("flowClosed", "FlowClosed"),
    22: ("stepWaitForCompleted", "StepWaitForCompleted"),
    23: ("stepWaitForFailed", "StepWaitForFailed"),
    24: ("stepExecuteCompleted", "StepExecuteCompleted"),
    25: ("stepExecuteFailed", "StepExecuteFailed"),
    26: ("rpcExecutionCompleted", "RpcExecutionCompleted"),
    27: ("channelExternalPublish", "ChannelExternalPublish"),
    28: ("stepWaitForPending", "StepWaitForPending"),
    29: ("stepExecutePending", "StepExecutePending"), 30: ("timeTravelFork", "TimeTravelFork"),
    31: ("channelExternalDelete", "ChannelExternalDelete"),
}  # fmt: skip
"""``FlowHistoryEvent``'s payload cases: field number -> (JSON name, Dex Web type name)."""

MESSAGES: dict[str, dict[int, Field]] = {
    "FlowHistoryEvent": {
        1: ("eventId", "int64", ""), 2: ("eventTime", "Timestamp", ""),
        3: ("runAttempt", "int32", ""),
        20: ("flowStartedOrContinued", "FlowStartedOrContinuedHistoryEvent", ""),
        21: ("flowClosed", "FlowClosedHistoryEvent", ""),
        22: ("stepWaitForCompleted", "StepWaitForCompletedEvent", ""),
        23: ("stepWaitForFailed", "StepMethodFailedEvent", ""),
        24: ("stepExecuteCompleted", "StepExecuteCompletedEvent", ""),
        25: ("stepExecuteFailed", "StepMethodFailedEvent", ""),
        26: ("rpcExecutionCompleted", "RpcExecutionCompletedEvent", ""),
        27: ("channelExternalPublish", "ChannelExternalPublishEvent", ""),
        28: ("stepWaitForPending", "StepMethodPendingEvent", ""),
        29: ("stepExecutePending", "StepMethodPendingEvent", ""),
        30: ("timeTravelFork", "TimeTravelForkHistoryEvent", ""),
        31: ("channelExternalDelete", "ChannelExternalDeleteEvent", ""),
    },
    "FlowStartedOrContinuedHistoryEvent": {
        1: ("flowExecutionId", "FlowExecutionID", ""), 2: ("flowType", "string", ""),
        3: ("flowConfig", "FlowConfig", ""), 4: ("flowTimeout", "Duration", ""),
        5: ("flowTimeoutPolicy", "enum", ""), 10: ("initialStart", "FlowInitialStart", ""),
        11: ("continuedStart", "FlowContinuedStart", ""),
    },
    "FlowExecutionID": {1: ("flowId", "string", ""), 2: ("runId", "string", "")},
    "FlowConfig": {
        1: ("activeStepSearchMode", "enum", ""), 2: ("continueAsNewThreshold", "int32", ""),
        3: ("continueAsNewPageSizeInBytes", "int32", ""), 4: ("stepDurability", "enum", ""),
    },
    "RetryPolicy": _RETRY,
    "StepOptions": _STEP_OPTIONS,
    "FlowInitialStart": {
        1: ("startStepType", "string", ""), 2: ("stepInput", _VALUE, ""),
        3: ("stepOptions", "StepOptions", ""), 4: ("initialAttributes", "KV", "*"),
    },
    _VALUE: {
        1: ("internalBlobIdForStringValue", "string", ""),
        2: ("internalBlobIdForObjValue", "string", ""), 3: ("stringValue", "string", ""),
        4: ("objValue", "EncodedObject", ""), 5: ("intValue", "int64", ""),
        6: ("doubleValue", "double", ""), 7: ("boolValue", "bool", ""),
        8: ("nullValue", "enum", ""),
    },
    "EncodedObject": {1: ("encoding", "string", ""), 2: ("payload", "bytes", "")},
    "KV": _KV,
    "FlowContinuedStart": {
        1: ("previousRunId", "string", ""), 2: ("stepsToStart", "StepMovement", "*"),
        3: ("stepsToResume", "StepExecutionResumeInfo", "*"),
        4: ("pendingChannelMessages", "ChannelValues", "map"), 5: ("attributes", "KV", "*"),
        6: ("completedSteps", "StepCompletionOutput", "*"),
        7: ("stickyAppWorkerId", "string", ""),
    },
    "StepMovement": {
        1: ("stepType", "string", ""), 2: ("stepInput", _VALUE, ""),
        3: ("stepOptions", "StepOptions", ""),
        4: ("fromStepExecutionIdInternalOnly", "string", ""),
        5: ("recoveryErrorInternalOnly", "RecoveryErrorInfo", ""),
    },
    "RecoveryErrorInfo": {1: ("detail", "string", ""), 2: ("errorType", "string", "")},
    "StepExecutionResumeInfo": {
        1: ("stepExecutionId", "string", ""), 2: ("step", "StepMovement", ""),
        4: ("waitingCondition", "WaitingCondition", ""), 5: ("stepExeLocals", "KV", "*"),
    },
    "FlowResult": {
        1: ("flowStatus", "enum", ""), 2: ("results", "StepCompletionOutput", "*"),
        3: ("errorType", "enum", ""), 4: ("errorMessage", "string", ""),
    },
    "StepCompletionOutput": {
        1: ("completedStepType", "string", ""), 2: ("completedStepExecutionId", "string", ""),
        3: ("completedStepOutput", _VALUE, ""),
    },
    "WaitingCondition": {
        1: ("waitingConditionType", "enum", ""), 2: ("timerConditions", "TimerCondition", "*"),
        3: ("channelConditions", "ChannelCondition", "*"),
        4: ("conditionCombinations", "ConditionCombination", "*"),
        5: ("subFlowConditions", "SubFlowCondition", "*"),
    },
    "TimerCondition": {
        1: ("conditionId", "string", ""), 2: ("durationSeconds", "int64", ""),
        3: ("firingUnixTimestampSeconds", "int64", ""),
    },
    "ChannelCondition": {
        1: ("conditionId", "string", ""), 2: ("channelName", "string", ""),
        3: ("atLeast", "int32", "?"), 4: ("atMost", "int32", "?"),
    },
    "ConditionCombination": {1: ("conditionIds", "string", "*")},
    "SubFlowCondition": {
        1: ("conditionId", "string", ""), 2: ("subFlowType", "string", ""),
        3: ("startStepType", "string", ""), 4: ("stepInput", _VALUE, ""),
        7: ("subFlowIndex", "int32", ""),
    },
    "ChannelValues": {1: ("messages", "ChannelMessage", "*")},
    "ChannelMessage": {
        1: ("channelName", "string", ""), 2: ("value", _VALUE, ""), 3: ("messageId", "string", ""),
    },
    "FlowClosedHistoryEvent": {
        1: ("flowStatus", "enum", ""), 2: ("results", "StepCompletionOutput", "*"),
        3: ("errorType", "enum", ""), 4: ("errorMessage", "string", ""),
        5: ("continuedToRunId", "string", ""), 6: ("stickyAppWorkerId", "string", ""),
    },
    "StepWaitForCompletedEvent": {**_METHOD_EVENT, 2: ("output", "StepWaitForOutput", "")},
    "StepWaitForOutput": {1: ("waitForCondition", "WaitingCondition", ""),
                          **_STEP_METHOD_OUTPUT},
    "StepMethodEventInput": {
        1: ("unavailable", "bool", ""), 2: ("stepInput", _VALUE, ""),
        3: ("conditionResults", "ConditionResults", ""), 4: ("attributes", "KV", "*"),
        5: ("stepExecutionLocals", "KV", "*"),
    },
    "ConditionResults": {
        1: ("channelResults", "ChannelResult", "*"), 2: ("timerResults", "TimerResult", "*"),
        3: ("waitForFailed", "bool", ""), 4: ("subFlowResults", "FlowResult", "*"),
    },
    "ChannelResult": {
        1: ("conditionId", "string", ""), 2: ("conditionStatus", "enum", ""),
        3: ("channelName", "string", ""), 4: ("values", _VALUE, "*"),
    },
    "TimerResult": {1: ("conditionId", "string", ""), 2: ("conditionStatus", "enum", "")},
    "AttributeWrite": {
        1: ("key", "string", ""), 2: ("value", _VALUE, ""), 5: ("isHardDeleteOnNull", "bool", ""),
    },
    "ChannelMessageDeletion": {1: ("channelName", "string", ""), 2: ("messageId", "string", "")},
    "StepMethodEventContext": {
        1: ("stepExecutionId", "string", ""), 2: ("fromStepExecutionId", "string", ""),
        3: ("stepType", "string", ""), 4: ("durability", "enum", ""),
        5: ("finalAttempt", "int32", ""), 6: ("startedTime", "Timestamp", ""),
        7: ("duration", "Duration", ""), 8: ("methodOptions", "StepMethodOptions", ""),
        9: ("lastFailureInfo", "StepMethodFailure", ""),
    },
    "StepMethodOptions": {
        1: ("timeoutSeconds", "int32", ""), 2: ("retryPolicy", "RetryPolicy", ""),
        3: ("heartbeatTimeoutSeconds", "int32", ""),
    },
    "StepMethodFailure": {
        1: ("backendError", "string", ""), 2: ("details", "ServiceErrorResponse", ""),
        3: ("attempt", "int32", ""),
    },
    "ServiceErrorResponse": {
        1: ("detail", "string", ""), 2: ("subStatus", "enum", ""),
        3: ("originalWorkerErrorDetail", "string", ""),
        4: ("originalWorkerErrorType", "string", ""),
        5: ("originalWorkerErrorStatus", "int32", ""),
        6: ("originalWorkerErrorStackTrace", "string", ""),
        7: ("dispatchTaskErrorReason", "enum", ""),
    },
    "StepMethodFailedEvent": {**_METHOD_EVENT, 2: ("output", "StepMethodFailedOutput", "")},
    "StepMethodFailedOutput": {1: ("failure", "StepMethodFailure", "")},
    "StepExecuteCompletedEvent": {**_METHOD_EVENT,
                                  2: ("output", "StepExecuteCompletedOutput", "")},
    "StepExecuteCompletedOutput": {1: ("stepDecision", "StepDecision", ""),
                                   **_STEP_METHOD_OUTPUT},
    "StepDecision": {
        1: ("nextSteps", "StepMovement", "*"), 2: ("closeDecision", "CloseDecision", ""),
        3: ("cancelStepTypes", "string", "*"), 4: ("cancelSiblingStepTypes", "string", "*"),
    },
    "CloseDecision": {
        1: ("closeDecisionType", "enum", ""), 2: ("conditionalChannelNames", "string", "*"),
        3: ("closeInput", _VALUE, ""),
    },
    "RpcExecutionCompletedEvent": {
        1: ("rpcName", "string", ""), 2: ("input", _VALUE, ""), 3: ("output", _VALUE, ""),
        4: ("stepDecision", "StepDecision", ""), 5: ("upsertAttributes", "AttributeWrite", "*"),
        6: ("recordEvents", "KV", "*"), 7: ("publishToChannel", "ChannelMessage", "*"),
        8: ("isSetAttributeApi", "bool", ""),
        9: ("deleteFromChannel", "ChannelMessageDeletion", "*"),
        10: ("servedByAppWorkerId", "string", ""),
    },
    "ChannelExternalPublishEvent": {1: ("messages", "ChannelMessage", "*")},
    "StepMethodPendingEvent": {
        1: ("input", "StepMethodEventInput", ""), 2: ("context", "StepMethodEventContext", ""),
        3: ("phase", "enum", ""),
    },
    "TimeTravelForkHistoryEvent": {
        1: ("previousRunId", "string", ""), 2: ("previousRunAttempt", "int32", ""),
        3: ("targetRunAttempt", "int32", ""), 4: ("targetEventId", "int64", ""),
    },
    "ChannelExternalDeleteEvent": {1: ("messages", "ChannelMessageDeletion", "*")},
    "GetHistoryEventsRequest": {
        1: ("flowId", "string", ""), 2: ("runId", "string", ""),
        3: ("startInternalEventId", "int64", ""), 4: ("estimatePageSize", "int32", ""),
        5: ("nextPageToken", "bytes", ""), 6: ("runAttempt", "int32", ""),
    },
    "GetHistoryEventsResponse": {
        1: ("events", "FlowHistoryEvent", "*"), 2: ("nextPageToken", "bytes", ""),
        3: ("nextInternalEventId", "int64", ""),
    },
    "GetFlowSummaryRequest": {1: ("flowId", "string", ""), 2: ("runId", "string", "")},
    "GetFlowSummaryResponse": {
        1: ("flowExecutionId", "FlowExecutionID", ""), 2: ("firstRunId", "string", ""),
        3: ("requestId", "string", ""), 4: ("flowType", "string", ""),
        5: ("flowStatus", "enum", ""), 6: ("startTime", "Timestamp", ""),
        7: ("closeTime", "Timestamp", ""), 8: ("runAttempt", "int32", ""),
    },
    "google.rpc.Status": {
        1: ("code", "int32", ""), 2: ("message", "string", ""), 3: ("details", "Any", "*"),
    },
    "Any": {1: ("typeUrl", "string", ""), 2: ("value", "bytes", "")},
    "Timestamp": {1: ("seconds", "int64", ""), 2: ("nanos", "int32", "")},
    "Duration": {1: ("seconds", "int64", ""), 2: ("nanos", "int32", "")},
}
"""Every message by name."""
