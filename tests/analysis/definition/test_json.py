"""FDG 1.0 JSON: valid against the schema's shape, self-consistent, deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dexviz.analysis.definition import (
    EDGE_KINDS,
    NODE_KINDS,
    analyze_flow,
    to_fdg,
    to_json,
)
from tests.analysis.definition.helpers import CONTRACT_EDIT, FIXTURES

jsonschema = pytest.importorskip("jsonschema")

_SPAN = {
    "type": "object",
    "required": ["line", "col"],
    "properties": {"line": {"type": "integer"}, "col": {"type": "integer"}},
}
FDG_SCHEMA = {
    "type": "object",
    "required": ["schemaVersion", "valid", "source", "flow", "nodes", "edges", "diagnostics"],
    "additionalProperties": False,
    "properties": {
        "schemaVersion": {"const": "1.0"},
        "valid": {"type": "boolean"},
        "source": {
            "type": "object",
            "required": ["language", "path"],
            "properties": {"language": {"const": "python"}, "path": {"type": "string"}},
        },
        "flow": {
            "type": "object",
            "required": ["name", "startStepId"],
            "properties": {
                "name": {"type": "string"},
                "startStepId": {"type": ["string", "null"]},
                "span": _SPAN,
            },
        },
        "nodes": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "kind", "name"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string"},
                "kind": {"enum": list(NODE_KINDS)},
                "name": {"type": "string"},
                "parentId": {"type": "string"},
                "condition": {"type": "string"},
                "start": {"type": "boolean"},
                "wait": {
                    "type": "object", "required": ["type", "conditions"],
                    "properties": {
                        "type": {"enum": ["until", "allOf", "anyOf", "anyComboOf",
                                          "skipWaitImmediately", "unknown"]},
                        "conditions": {"type": "array", "items": {
                            "type": "object", "required": ["kind", "label"],
                            "properties": {"kind": {"enum": ["channel", "timer", "subflow",
                                                             "unknown"]}},
                        }},
                    },
                },
                "decision": {
                    "type": "object", "required": ["type", "checkedChannels", "cancellations"],
                    "properties": {
                        "type": {"enum": ["goTo", "goToMany", "gracefulComplete",
                                          "forceComplete", "forceFail", "deadEnd",
                                          "forceCompleteIfChannelsEmpty", "rpcResult",
                                          "unknown"]},
                        "cancellations": {"type": "array", "items": {
                            "type": "object", "required": ["stepId", "scope"],
                            "properties": {"scope": {"enum": ["all", "siblings"]}},
                        }},
                    },
                },
                "resource": {"type": "object", "properties": {"map": {"type": "boolean"}}},
                "span": _SPAN,
                "metadata": {"type": "object"},
            },
        }},
        "edges": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "kind", "from", "to"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": "^edge:[0-9]{4}$"},
                "kind": {"enum": list(EDGE_KINDS)},
                "from": {"type": "string"},
                "to": {"type": "string"},
                "label": {"type": "string"},
                "condition": {"type": "string"},
                "multiplicity": {"type": "string", "pattern": "^×([0-9]+|N)$"},
            },
        }},
        "diagnostics": {"type": "array", "items": {
            "type": "object",
            "required": ["severity", "code", "message", "span"],
            "properties": {"severity": {"enum": ["error", "warning"]}},
        }},
    },
}
"""The FDG 1.0 document shape (Dex's vocabulary; optional fields absent rather than null)."""

SOURCES = [
    (CONTRACT_EDIT, None),
    (FIXTURES / "timers_any_of.py", None),
    (FIXTURES / "rpc_driven.py", None),
    (FIXTURES / "self_loop.py", None),
    (FIXTURES / "failure_routing.py", None),
    (FIXTURES / "cancellation.py", None),
    (FIXTURES / "several_flows.py", "BatchFlow"),
    (FIXTURES / "several_flows.py", "CheckFlow"),
]


@pytest.mark.parametrize(("path", "flow"), SOURCES, ids=lambda v: getattr(v, "stem", v))
def test_json_matches_the_fdg_shape_and_is_self_consistent(path: Path, flow: str | None):
    document = json.loads(to_json(analyze_flow(path, flow)))
    jsonschema.validate(document, FDG_SCHEMA)
    ids = [node["id"] for node in document["nodes"]]
    assert len(ids) == len(set(ids))
    for node in document["nodes"]:
        assert node.get("parentId", ids[0]) in ids
    for edge in document["edges"]:
        assert edge["from"] in ids and edge["to"] in ids
    assert [e["id"] for e in document["edges"]] == [
        f"edge:{n:04d}" for n in range(1, len(document["edges"]) + 1)
    ]
    start = document["flow"]["startStepId"]
    assert [n["id"] for n in document["nodes"] if n.get("start")] == [start]


def test_contract_edit_json_carries_the_seed_details():
    document = to_fdg(analyze_flow(CONTRACT_EDIT))
    assert document["schemaVersion"] == "1.0" and document["valid"] is True
    assert document["flow"]["name"] == "ContractEditFlow"
    waits = {n["id"].split(":")[1]: n["wait"] for n in document["nodes"] if n["kind"] == "wait"}
    assert waits["EnterContractEdit"] == {
        "type": "until",
        "conditions": [{"kind": "channel", "label": "contractEditToken.for 1",
                        "resourceId": "channel:contractEditToken"}],
    }
    fan_out = [e for e in document["edges"] if e.get("multiplicity")]
    assert [(e["to"], e["label"], e["multiplicity"]) for e in fan_out] == [
        ("step:EnterContractEdit", "fan-out", "×N")
    ]
    channel = next(n for n in document["nodes"] if n["id"] == "channel:contractEditToken")
    assert channel["resource"] == {"valueType": "str", "map": False,
                                   "variable": "CONTRACT_EDIT_TOKEN"}


def test_output_is_deterministic():
    first = to_json(analyze_flow(FIXTURES / "cancellation.py"))
    second = to_json(analyze_flow(FIXTURES / "cancellation.py"))
    assert first == second
    assert json.loads(first)["nodes"][0]["id"] == "step:RequestQuotes"
