"""execution_graph(): the lineage graph view (DOT, SVG, display) and the definition overlay."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from dexviz.viz.execution_view import execution_graph
from dexviz.viz.render import GraphView
from tests.analysis.factory import contract_edit_history, overlapping_token_history
from tests.analysis.runs import contract_edit_run

SVG = "{http://www.w3.org/2000/svg}"


def test_the_view_is_a_graph_view_with_deterministic_dot():
    view = execution_graph(contract_edit_history())
    assert isinstance(view, GraphView)
    assert view.to_dot() == execution_graph(contract_edit_history()).to_dot()
    assert repr(view) == ("ExecutionGraphView(flow='ContractEditFlow', run_id='run-1', "
                          "executions=25, nodes=9, groups=3, edges=17, status='COMPLETED')")


def test_dot_has_collapsed_groups_flow_end_message_edges_and_a_full_legend():
    dot = execution_graph(contract_edit_history()).to_dot()
    assert "EnterContractEdit ×8" in dot and "7 Completed · 1 Failed" in dot
    assert '"__end__"' in dot and "graceful_complete" in dot
    assert 'class="message"' in dot and "contractEditToken ×4" in dot
    for status in ("Source", "Active", "Pending", "Waiting", "Failed", "Canceled", "Completed"):
        assert f">{status}<" in dot, status


def test_without_collapse_every_execution_has_its_own_node():
    dot = execution_graph(overlapping_token_history(), collapse_at=None, messages=False).to_dot()
    for n in (1, 2, 3):
        assert f'id="exec:EnterContractEdit-{n}"' in dot
    assert 'class="message"' not in dot


@pytest.mark.requires_dot
def test_svg_has_one_element_per_node_with_the_model_ids():
    view = execution_graph(contract_edit_run(0))
    root = ET.fromstring(view.render("svg"))
    nodes = {g.get("id"): g.get("class") for g in root.iter(f"{SVG}g")
             if "node" in (g.get("class") or "").split()}
    assert set(nodes) == {f"exec:{n.node_id}" for n in view.model.nodes}
    assert nodes["exec:group:EnterContractEdit-1"] == "node group failed"
    assert nodes["exec:__end__"] == "node end completed"
    edges = [g for g in root.iter(f"{SVG}g") if "edge" in (g.get("class") or "").split()]
    assert len(edges) == len(view.model.edges)


def test_display_falls_back_to_dot_text_without_graphviz(empty_path):
    bundle = execution_graph(contract_edit_history())._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"].startswith("digraph") and "apt install graphviz" in (
        bundle["text/plain"])


def test_the_definition_overlay_puts_counts_and_statuses_on_step_cards():
    view = execution_graph(contract_edit_run(0))
    overlay = view.definition_overlay()  # the source file recorded in the history
    assert overlay is not None
    dot = overlay.to_dot()
    assert "8 executions" in dot and "7 Completed" in dot and "6 executions" in dot
    assert 'class="step overlay failed"' in dot
    assert execution_graph(contract_edit_history()).definition_overlay() is None
    explicit = execution_graph(contract_edit_history()).definition_overlay(
        "dexviz/examples/contract_edit.py")
    assert explicit is not None and "2 executions" in explicit.to_dot()


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="rankdir must be one of"):
        execution_graph(contract_edit_history(), rankdir="XY")
    with pytest.raises(ValueError, match="collapse_at must be at least 2"):
        execution_graph(contract_edit_history(), collapse_at=0)
