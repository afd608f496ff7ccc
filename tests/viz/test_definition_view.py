"""definition_graph(): golden DOT, SVG structure, outputs, options, fallbacks and scale.

Golden files live in tests/golden/definition/. Regenerate them after an intended change with
``pytest --update-golden`` or ``DEXVIZ_UPDATE_GOLDEN=1 pytest tests/viz/test_definition_view.py``
and review the diff; otherwise they are compared exactly.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest

from dexviz.viz.definition_view import DefinitionGraphView, definition_graph
from dexviz.viz.render import INSTALL_HINT, GraphvizNotInstalledError
from tests.fixtures.flows.generated import hub_flow_source, layered_flow_source

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "flows"
GOLDEN = REPO_ROOT / "tests" / "golden" / "definition"
CONTRACT_EDIT = REPO_ROOT / "dexviz" / "examples" / "contract_edit.py"
SVG = "{http://www.w3.org/2000/svg}"

GOLDEN_CASES = {
    "contract_edit": (CONTRACT_EDIT, None, {}),
    "contract_edit_lr_collapsed": (
        CONTRACT_EDIT, None, {"rankdir": "LR", "collapse": True, "highlight": ["EditContract"]},
    ),
    "contract_edit_no_resources": (CONTRACT_EDIT, None, {"hide_resources": True}),
    "timers_any_of": (FIXTURES / "timers_any_of.py", None, {}),
    "rpc_driven": (FIXTURES / "rpc_driven.py", None, {}),
    "self_loop": (FIXTURES / "self_loop.py", None, {}),
    "failure_routing": (FIXTURES / "failure_routing.py", None, {}),
    "cancellation": (FIXTURES / "cancellation.py", None, {}),
    "several_flows_batch": (FIXTURES / "several_flows.py", "BatchFlow", {}),
    "several_flows_check": (FIXTURES / "several_flows.py", "CheckFlow", {}),
}


def _updating(update_golden: bool) -> bool:
    return update_golden or os.environ.get("DEXVIZ_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_dot_matches_its_golden_file(name, update_golden):
    path, flow, options = GOLDEN_CASES[name]
    dot = definition_graph(path, flow, **options).to_dot()
    golden = GOLDEN / f"{name}.dot"
    if _updating(update_golden):
        golden.write_text(dot, encoding="utf-8")
    assert golden.exists(), f"missing {golden}; create it with DEXVIZ_UPDATE_GOLDEN=1"
    assert dot == golden.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def contract_edit() -> DefinitionGraphView:
    return definition_graph(CONTRACT_EDIT)


@pytest.mark.requires_dot
def test_svg_has_one_node_per_step_and_per_channel_with_stable_ids(contract_edit):
    root = ElementTree.fromstring(contract_edit.render("svg"))
    nodes = {g.get("id"): g.get("class") for g in root.iter(f"{SVG}g")
             if "node" in (g.get("class") or "").split()}
    steps = {i for i in nodes if i.startswith("step:")}
    channels = {i for i in nodes if i.startswith("channel:")}
    assert steps == {s.id for s in contract_edit.model.steps}
    assert len(steps) == 6
    assert channels == {"channel:contractEditToken", "channel:contractEditFinished"}
    stubs = {i for i in nodes if i.startswith("stub:")}
    assert set(nodes) - stubs == steps | channels | {"legend"}
    # each publish to a Channel that feeds a wait ends at a stub beside its publisher
    assert "stub:channel:contractEditToken@step:SaveContractEdit" in stubs
    assert nodes["step:StartContractEdits"] == "node step start"
    assert nodes["step:EditContract"] == "node step"
    edges = {g.get("id"): g.get("class") for g in root.iter(f"{SVG}g")
             if "edge" in (g.get("class") or "").split()}
    assert len(edges) == 17 and "edge:0001" in edges
    assert sum("failure-transition" in c for c in edges.values()) == 3
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    assert graph.get("id") == "flow:ContractEditFlow"


def test_the_picture_carries_the_seed_details(contract_edit):
    dot = contract_edit.to_dot()
    assert "▶ START" in dot and dot.count('class="step start"') == 1
    assert dot.count('label="Execute failure"') == 3
    assert 'label="fan-out ×N"' in dot and 'label="fan-out"' in dot
    assert "• contractEditToken.for 1" in dot and "• contractEditFinished.for edit_count" in dot
    assert "if not (started_edit.should_withdraw)" in dot
    assert dot.count('class="channel"') == 2 and 'class="channel-stub"' in dot
    assert '"legend" [class="legend"' in dot


def test_json_markdown_and_repr(contract_edit):
    document = json.loads(contract_edit.to_json())
    assert document["flow"] == {"name": "ContractEditFlow",
                                "startStepId": "step:StartContractEdits",
                                "span": {"line": 171, "col": 0}}
    assert len(document["edges"]) == 17
    assert contract_edit.to_markdown().startswith("**Flow: ContractEditFlow**")
    assert contract_edit.to_markdown(locale="zh-Hans").startswith("**Flow：ContractEditFlow**")
    assert repr(contract_edit) == (
        "DefinitionGraphView(flow='ContractEditFlow', steps=6, channels=2, attributes=0, "
        "edges=17, diagnostics=0)"
    )
    assert contract_edit.valid


def test_save_text_formats_by_suffix(contract_edit, tmp_path):
    assert contract_edit.save(tmp_path / "g.json").read_text(encoding="utf-8") == (
        contract_edit.to_json()
    )
    assert contract_edit.save(tmp_path / "g.md").read_text(encoding="utf-8") == (
        contract_edit.to_markdown()
    )
    assert contract_edit.save(tmp_path / "g.dot").read_text(encoding="utf-8") == (
        contract_edit.to_dot()
    )
    with pytest.raises(ValueError, match=r"use one of \.dot, \.gv, \.json, \.md, \.pdf"):
        contract_edit.save(tmp_path / "g.html")


@pytest.mark.requires_dot
def test_save_rendered_formats_by_suffix(contract_edit, tmp_path):
    assert contract_edit.save(tmp_path / "g.svg").read_bytes().lstrip().startswith(b"<?xml")
    assert contract_edit.save(tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    assert contract_edit.save(tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")


def test_without_dot_the_notebook_gets_dot_text_and_save_svg_raises(
    contract_edit, empty_path, tmp_path
):
    bundle = contract_edit._repr_mimebundle_()
    assert bundle == {"text/plain": contract_edit.to_dot() + "\n" + INSTALL_HINT}
    with pytest.raises(GraphvizNotInstalledError, match="apt install graphviz"):
        contract_edit.save(tmp_path / "g.svg")


@pytest.mark.requires_dot
def test_with_dot_the_notebook_gets_svg(contract_edit):
    bundle = contract_edit._repr_mimebundle_()
    assert 'id="step:EditContract"' in bundle["image/svg+xml"]
    assert bundle["text/plain"] == repr(contract_edit)


def test_options_hide_resources_collapse_and_highlight():
    hidden = definition_graph(CONTRACT_EDIT, hide_resources=True).to_dot()
    assert "channel:" not in hidden and 'shape="cylinder"' not in hidden
    collapsed = definition_graph(CONTRACT_EDIT, collapse=True, rankdir="LR",
                                 highlight="EditContract").to_dot()
    assert 'rankdir="LR"' in collapsed and "WaitFor" not in collapsed
    assert 'class="step highlight"' in collapsed
    assert ':"d0"' not in collapsed  # compact cards have no ports
    assert 'label="go_to\\nif not (started_edit.should_withdraw)"' in collapsed


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="rankdir must be one of"):
        definition_graph(CONTRACT_EDIT, rankdir="diagonal")
    with pytest.raises(ValueError, match=r"cannot highlight \['Nope'\]"):
        definition_graph(CONTRACT_EDIT, highlight=["Nope"])


def test_an_invalid_graph_says_so_in_the_title(tmp_path):
    source = tmp_path / "dynamic.py"
    source.write_text(textwrap.dedent("""
        from dexviz import Context, Flow, Step, StepDecision, StepList, go_to

        class Hop(Step[str]):
            def execute(self, context: Context, name: str) -> StepDecision:
                return go_to(globals()[name], name)

        class HopFlow(Flow[str]):
            def get_steps(self) -> StepList[str]:
                return StepList.start_step(Hop())
    """), encoding="utf-8")
    view = definition_graph(source)
    dot = view.to_dot()
    assert not view.valid
    assert "1 error: see .model.diagnostics" in dot
    assert 'class="unknown"' in dot and "UNKNOWN TARGET (dynamic)" in dot
    assert 'label="dynamic"' in dot


def test_a_generated_300_step_flow_has_one_card_per_step_and_one_edge_per_loop_fan_out(
    tmp_path,
):
    source = tmp_path / "layered.py"
    source.write_text(layered_flow_source(300), encoding="utf-8")
    view = definition_graph(source)
    assert len(view.model.steps) == 300 and view.model.valid
    dot = view.to_dot()
    assert dot.count('class="step') == 300
    # Each of the 30 blocks fans out once in a comprehension: one edge each, marked ×N.
    assert dot.count('label="fan-out ×N"') == 30
    assert "listed in the cards" not in dot  # nothing is busy enough to fold


@pytest.mark.requires_dot
def test_a_generated_300_step_flow_renders_to_svg(tmp_path):
    source = tmp_path / "layered.py"
    source.write_text(layered_flow_source(300), encoding="utf-8")
    root = ElementTree.fromstring(definition_graph(source).render("svg"))
    ids = [g.get("id") or "" for g in root.iter(f"{SVG}g")]
    assert sum(i.startswith("step:") for i in ids) == 300
    assert sum(i.startswith("channel:") for i in ids) == 30


def test_edges_of_busy_nodes_are_folded_into_the_cards(tmp_path):
    source = tmp_path / "hub.py"
    source.write_text(hub_flow_source(40), encoding="utf-8")
    view = definition_graph(source)
    assert len(view.model.edges_of("resource_publish")) == 40  # the model keeps every edge
    dot = view.to_dot()
    assert "resource-publish" not in dot and "failure-transition" not in dot
    assert dot.count("publish → done") == 40 and dot.count("Execute failure → S0") == 40
    assert "Execute-failure target of 40 Steps" in dot
    assert "80 uses listed in the cards" in dot  # 40 waits and 40 publishes on done
    assert "120 edges of busy nodes are listed in the cards" in dot


@pytest.mark.requires_dot
def test_a_300_step_flow_with_hub_nodes_still_renders(tmp_path):
    source = tmp_path / "hub.py"
    source.write_text(hub_flow_source(300), encoding="utf-8")
    root = ElementTree.fromstring(definition_graph(source).render("svg"))
    ids = [g.get("id") or "" for g in root.iter(f"{SVG}g")]
    assert sum(i.startswith("step:") for i in ids) == 300
