"""The acceptance case: the Critical Section seed's ContractEditFlow listing, reproduced.

The seed page (seeds/critical-section.zh-Hans.md) lists 17 connections for ContractEditFlow;
the analysis of dexviz/examples/contract_edit.py must hold exactly those (and no other
transition), and its zh-Hans Markdown must have the seed's structure line for line. The
Step descriptions come from the example's docstrings, which differ slightly from the seed's.
"""

from __future__ import annotations

import ast
import re

import pytest

from dexviz.analysis.definition import FlowDefinitionGraph, analyze_flow, to_markdown
from tests.analysis.definition.helpers import CONTRACT_EDIT

SEED_LISTING = """\
**Flow：ContractEditFlow**

起始 Step：`StartContractEdits`

**Step 列表**

- `EditContract`：Apply the edit while holding the token.
  - `deadEnd` 条件 `started_edit.should_withdraw`
- `EnterContractEdit`：Wait for the contract edit token to enter the section.
  - WaitFor `until`：channel `contractEditToken.for 1`
- `FinishContractEdits`：Wait for every edit to report, then complete with the results.
  - WaitFor `until`：channel `contractEditFinished.for edit_count`
  - `gracefulComplete`
- `ReleaseContractEditToken`：Report the failed edit and release the token.
  - `deadEnd`
- `SaveContractEdit`：Save the edit, report it, and release the token.
  - `deadEnd`
- `StartContractEdits`：Start one edit path per contract edit and the Step that awaits them.

**连接**

- `goTo` (decision; EditContract; 条件 `not (started_edit.should_withdraw)`) → `SaveContractEdit` (step)：go_to
- `goTo` (decision; EnterContractEdit) → `EditContract` (step)：go_to
- `goToMany` (decision; StartContractEdits) → `EnterContractEdit` (step)：fan-out
- `goToMany` (decision; StartContractEdits) → `FinishContractEdits` (step)：fan-out
- `contractEditFinished` (channel) → `FinishContractEdits` (step)：results
- `contractEditFinished` (channel) → `until` (wait; FinishContractEdits)：contractEditFinished.for edit_count
- `contractEditToken` (channel) → `until` (wait; EnterContractEdit)：contractEditToken.for 1
- `EditContract` (step) → `contractEditFinished` (channel)：publish
- `EditContract` (step) → `contractEditToken` (channel)：publish
- `EditContract` (step) → `ReleaseContractEditToken` (step)：Execute failure
- `EnterContractEdit` (step) → `ReleaseContractEditToken` (step)：Execute failure
- `ReleaseContractEditToken` (step) → `contractEditFinished` (channel)：publish
- `ReleaseContractEditToken` (step) → `contractEditToken` (channel)：publish
- `SaveContractEdit` (step) → `contractEditFinished` (channel)：publish
- `SaveContractEdit` (step) → `contractEditToken` (channel)：publish
- `SaveContractEdit` (step) → `ReleaseContractEditToken` (step)：Execute failure
- `StartContractEdits` (step) → `contractEditToken` (channel)：publish
"""  # noqa: E501 - the seed's lines, verbatim
"""The seed page's listing of ContractEditFlow, verbatim."""

# (kind, from, to, label, condition) for each of the seed's 17 connections, in its order.
SEED_CONNECTIONS = [
    ("transition", "decision:EditContract", "step:SaveContractEdit", "go_to",
     "not (started_edit.should_withdraw)"),
    ("transition", "decision:EnterContractEdit", "step:EditContract", "go_to", None),
    ("transition", "decision:StartContractEdits", "step:EnterContractEdit", "fan-out", None),
    ("transition", "decision:StartContractEdits", "step:FinishContractEdits", "fan-out", None),
    ("resource_read", "channel:contractEditFinished", "step:FinishContractEdits", "results",
     None),
    ("wait_condition", "channel:contractEditFinished", "wait:FinishContractEdits",
     "contractEditFinished.for edit_count", None),
    ("wait_condition", "channel:contractEditToken", "wait:EnterContractEdit",
     "contractEditToken.for 1", None),
    ("resource_publish", "step:EditContract", "channel:contractEditFinished", "publish", None),
    ("resource_publish", "step:EditContract", "channel:contractEditToken", "publish", None),
    ("failure_transition", "step:EditContract", "step:ReleaseContractEditToken",
     "Execute failure", None),
    ("failure_transition", "step:EnterContractEdit", "step:ReleaseContractEditToken",
     "Execute failure", None),
    ("resource_publish", "step:ReleaseContractEditToken", "channel:contractEditFinished",
     "publish", None),
    ("resource_publish", "step:ReleaseContractEditToken", "channel:contractEditToken",
     "publish", None),
    ("resource_publish", "step:SaveContractEdit", "channel:contractEditFinished", "publish",
     None),
    ("resource_publish", "step:SaveContractEdit", "channel:contractEditToken", "publish", None),
    ("failure_transition", "step:SaveContractEdit", "step:ReleaseContractEditToken",
     "Execute failure", None),
    ("resource_publish", "step:StartContractEdits", "channel:contractEditToken", "publish",
     None),
]


@pytest.fixture(scope="module")
def graph() -> FlowDefinitionGraph:
    return analyze_flow(CONTRACT_EDIT)


def _short(node_id: str) -> str:
    # wait:Step:12:8 and decision:Step:12:8 are compared without their source position.
    kind, _, rest = node_id.partition(":")
    if kind in ("wait", "decision"):
        return f"{kind}:{rest.split(':')[0]}"
    return node_id


def test_holds_exactly_the_seventeen_seed_connections_in_seed_order(graph):
    found = [
        (e.kind, _short(e.source), _short(e.target), e.label, e.condition) for e in graph.edges
    ]
    assert found == SEED_CONNECTIONS


def test_no_transition_the_seed_does_not_list(graph):
    control = [e for e in graph.edges if e.kind in ("transition", "failure_transition")]
    assert len(control) == 7
    assert len(graph.edges_of("transition")) == 4


def test_flow_start_step_and_validity(graph):
    assert graph.flow_name == "ContractEditFlow"
    assert graph.start_step_id == "step:StartContractEdits"
    assert graph.valid and graph.diagnostics == ()
    assert [s.name for s in graph.steps] == [
        "StartContractEdits", "EnterContractEdit", "EditContract", "SaveContractEdit",
        "ReleaseContractEditToken", "FinishContractEdits",
    ]
    assert [n.name for n in graph.nodes_of("channel")] == [
        "contractEditFinished", "contractEditToken",
    ]


def test_comprehension_fan_out_is_one_edge_marked_many(graph):
    fan_out = {graph.node(e.target).name: e.multiplicity for e in graph.edges_of("transition")
               if e.label == "fan-out"}
    assert fan_out == {"EnterContractEdit": "×N", "FinishContractEdits": None}


def test_wait_and_close_markers_per_step(graph):
    waits = {graph.node(n.parent_id or "").name: (n.wait.type if n.wait else None)
             for n in graph.nodes_of("wait")}
    assert waits == {"EnterContractEdit": "until", "FinishContractEdits": "until"}
    closes = sorted(
        (graph.node(n.parent_id or "").name, n.name, n.condition)
        for n in graph.nodes_of("decision") if n.decision and n.decision.is_close
    )
    assert closes == [
        ("EditContract", "deadEnd", "started_edit.should_withdraw"),
        ("FinishContractEdits", "gracefulComplete", None),
        ("ReleaseContractEditToken", "deadEnd", None),
        ("SaveContractEdit", "deadEnd", None),
    ]


def _docstrings() -> dict[str, str]:
    tree = ast.parse(CONTRACT_EDIT.read_text(encoding="utf-8"))
    return {
        node.name: (ast.get_docstring(node) or "").splitlines()[0]
        for node in tree.body if isinstance(node, ast.ClassDef)
    }


def test_zh_hans_listing_has_the_seed_structure_line_for_line(graph):
    produced = to_markdown(graph, locale="zh-Hans").splitlines()
    expected = SEED_LISTING.splitlines()
    assert len(produced) == len(expected)
    docstrings = _docstrings()
    step_line = re.compile(r"^- `(\w+)`：(.+)$")
    for ours, seed in zip(produced, expected, strict=True):
        match = step_line.match(seed)
        if match and not seed.startswith("- `goTo"):
            # Same Step, in the same place; the description is the example's docstring.
            assert ours == f"- `{match.group(1)}`：{docstrings[match.group(1)]}"
        else:
            assert ours == seed
