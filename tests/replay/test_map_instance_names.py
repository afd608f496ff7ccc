"""Every view shows an AttributeMap or ChannelMap instance key as given (issue 25, item 2).

The physical name percent-encodes the key (R49); the state fold, the Debugger's panels, the
execution graph's DOT, the pandas tables and the critical path decode it back to
``map-name/key`` with ``dexviz.history.instance_names.shown_name``. Only the raw payload a
panel prints (the record itself) keeps the escaped form. Both modes record the same names.
"""

from __future__ import annotations

import re

import pytest

from dexviz import (
    EventKind,
    History,
    critical_path,
    diff,
    execution_graph,
    state_at,
)
from dexviz.replay import frames
from dexviz.replay.session import Replay
from tests.engine.flows_live import (
    KEYED_DATA,
    KEYED_INBOX,
    MODES,
    SOON,
    SPACED_BOX,
    CopiesIntoTheMap,
    LFlow,
    engine_in,
    reach,
)

SHOWN_DATA, SHOWN_BOX = "data-map/special / key", "inbox/a b/c"
ESCAPED = re.compile(r"%2[0F]")


def run_keys(mode: str, message: str = "hello") -> History:
    """One run of ``CopiesIntoTheMap`` in ``mode``, filing ``message``."""
    flow = LFlow("Keys", CopiesIntoTheMap(), (), [KEYED_DATA, KEYED_INBOX])
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        # Published once the Step waits, so that the message is what released it (both modes).
        reach(engine, "f", lambda e: e.kind == EventKind.STEP_WAIT_FOR_COMPLETED)
        client.publish("f", KEYED_INBOX, SPACED_BOX, message)
        client.wait_for_flow("f", SOON)
        return engine.history("f")


@pytest.fixture(params=MODES)
def history(request: pytest.FixtureRequest) -> History:
    return run_keys(str(request.param))


def _without_raw_payloads(html: str) -> str:
    """The panel text a user reads, less the recorded payload it also prints verbatim."""
    return re.sub(r"<details.*?</details>", "", html, flags=re.S)


def test_the_state_names_map_instances_with_their_keys_as_given(history: History) -> None:
    published = next(i for i, e in enumerate(history) if e.kind == EventKind.MESSAGE_PUBLISHED)
    channels = state_at(history, published).channels
    assert list(channels) == [SHOWN_BOX] and [m.value for m in channels[SHOWN_BOX]] == ["hello"]
    assert dict(state_at(history, -1).attributes) == {SHOWN_DATA: "hello"}


def test_a_held_map_message_is_found_by_its_shown_or_physical_name(history: History) -> None:
    consumed = next(i for i, e in enumerate(history) if e.kind == EventKind.MESSAGE_CONSUMED)
    view = state_at(history, consumed)
    assert view.holder_of(SHOWN_BOX) == view.holder_of(KEYED_INBOX.physical_name(SPACED_BOX))
    assert view.holder_of(SHOWN_BOX) == ("CopiesIntoTheMap-1",)


def test_the_debugger_panels_show_map_keys_as_given(history: History) -> None:
    shown = "".join(
        _without_raw_payloads(html) for f in frames(Replay(history)) for html in f.panels
    )
    assert ESCAPED.search(shown) is None
    for text in (SHOWN_BOX, SHOWN_DATA, f"{SHOWN_BOX}.for 1", f"{SHOWN_DATA} = "):
        assert text in shown.replace("&quot;", '"')


def test_the_execution_graph_labels_map_channels_as_given(history: History) -> None:
    dot = execution_graph(history).to_dot()
    assert ESCAPED.search(dot) is None
    assert f"WaitFor · {SHOWN_BOX}.for 1" in dot and f'taillabel="{SHOWN_BOX}"' in dot


def test_the_message_table_and_critical_path_name_map_channels_as_given(
    history: History,
) -> None:
    pytest.importorskip("pandas")
    from dexviz import frames as tables

    assert list(tables(history).messages["channel"]) == [SHOWN_BOX]
    assert str(critical_path(history)).endswith(f"via client ({SHOWN_BOX})")


def test_the_run_diff_names_map_instances_as_given(history: History) -> None:
    differences = diff(history, run_keys("simulation", "bye")).differences
    consumed = next(d for d in differences if d.aspect == "consumed")
    writes = next(d for d in differences if d.aspect == "writes")
    assert consumed.a[0][0] == SHOWN_BOX and consumed.b[0][0] == SHOWN_BOX
    assert writes.a[0]["attribute"] == SHOWN_DATA
