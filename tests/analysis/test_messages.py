"""Message deliveries: publish -> consume -> returned."""

from __future__ import annotations

from dexviz.analysis.messages import deliveries
from tests.analysis.factory import TOKEN, canceled_holder_history, contract_edit_history


def test_every_message_has_its_publisher_and_consumer():
    rows = deliveries(contract_edit_history())
    assert len(rows) == 17  # 9 tokens (start + 8 releases) and 8 finished records
    first = rows[0]
    assert (first.channel, first.publisher, first.consumer) == (
        TOKEN, "StartContractEdits-1", "EnterContractEdit-1")
    last_token = [r for r in rows if r.channel == TOKEN][-1]
    assert last_token.consumer is None and last_token.consumed_ns is None


def test_a_returned_message_taken_again_is_a_second_delivery():
    rows = [r for r in deliveries(canceled_holder_history()) if r.message_id == "m-1"]
    assert [(r.consumer, r.returned_ns is not None) for r in rows] == [
        ("EnterContractEdit-1", True), ("EnterContractEdit-2", False)]
