"""The Markdown listing: seed structure in English (default) and zh-Hans, names untranslated."""

from __future__ import annotations

import pytest

from dexviz.analysis.definition import analyze_flow, to_markdown
from tests.analysis.definition.helpers import CONTRACT_EDIT, FIXTURES


@pytest.fixture(scope="module")
def english() -> list[str]:
    return to_markdown(analyze_flow(CONTRACT_EDIT)).splitlines()


def test_english_is_the_default_and_has_the_seed_sections(english):
    assert english[0] == "**Flow: ContractEditFlow**"
    assert english[2] == "Starting Step: `StartContractEdits`"
    assert english[4] == "**Steps**"
    assert "**Connections**" in english
    assert english[english.index("**Connections**") + 2] == (
        "- `goTo` (decision; EditContract; condition `not (started_edit.should_withdraw)`) → "
        "`SaveContractEdit` (step): go_to"
    )


def test_steps_are_listed_alphabetically_with_their_markers(english):
    steps = english[english.index("**Steps**") + 2: english.index("**Connections**") - 1]
    names = [line.split("`")[1] for line in steps if line.startswith("- ")]
    assert names == sorted(names) == [
        "EditContract", "EnterContractEdit", "FinishContractEdits", "ReleaseContractEditToken",
        "SaveContractEdit", "StartContractEdits",
    ]
    assert "  - WaitFor `until`: channel `contractEditToken.for 1`" in steps
    assert "  - `deadEnd` condition `started_edit.should_withdraw`" in steps


def test_locales_translate_words_but_never_names():
    graph = analyze_flow(CONTRACT_EDIT)
    zh = to_markdown(graph, locale="zh-Hans")
    en = to_markdown(graph, locale="en")
    for name in ("ContractEditFlow", "EditContract", "contractEditToken", "goToMany", "deadEnd"):
        assert name in zh and name in en
    assert "起始 Step：" in zh and "**Step 列表**" in zh and "**连接**" in zh and "条件" in zh
    assert "起始" not in en and "Starting Step: " in en


def test_unknown_locale_is_rejected():
    with pytest.raises(ValueError, match="unknown locale 'fr'.*en.*zh-Hans"):
        to_markdown(analyze_flow(CONTRACT_EDIT), locale="fr")


def test_rpcs_timeout_handler_and_cancellations_get_their_own_lines():
    text = to_markdown(analyze_flow(FIXTURES / "cancellation.py"))
    assert "**RPCs**\n\n- `stop_quotes`: Stop asking" in text
    assert "  - `rpcResult`: cancels `AwaitQuote`, cancels `Deadline`" in text
    assert "**Timeout handler**\n\n- `handle_timeout`: The Flow timed out" in text
    assert "  - `gracefulComplete`: cancels siblings `AwaitQuote`" in text
    assert "  - `forceCompleteIfChannelsEmpty`: channel `lateQuotes`" in text
    zh = to_markdown(analyze_flow(FIXTURES / "cancellation.py"), locale="zh-Hans")
    assert "  - `gracefulComplete`：取消同级 `AwaitQuote`" in zh
    assert "**RPC 列表**" in zh and "**超时处理**" in zh


def test_a_flow_without_start_step_says_so(analyze):
    graph = analyze("""
        class Only(Step[str]):
            def execute(self, context: Context, value: str) -> StepDecision:
                return dead_end()

        class RpcOnly(Flow[None]):
            def get_steps(self) -> StepList[None]:
                return StepList.without_start_step(Only())
    """)
    assert "Starting Step: none (started by RPCs)" in to_markdown(graph)
    assert "起始 Step：无（由 RPC 启动）" in to_markdown(graph, "zh-Hans")


def test_diagnostics_are_listed_with_file_and_line(analyze):
    graph = analyze("""
        class Hop(Step[str]):
            def execute(self, context: Context, target: str) -> StepDecision:
                return go_to(globals()[target], target)

        class HopFlow(Flow[str]):
            def get_steps(self) -> StepList[str]:
                return StepList.start_step(Hop())
    """)
    text = to_markdown(graph)
    line = next(x for x in text.splitlines() if "dynamic_step_target" in x)
    assert line.startswith("- ") and "flow_under_test.py:12:" in line
