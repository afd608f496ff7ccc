"""Cancelling a locally executed Step (issue 25, item 3), as a Dex application does it.

``tests/compat/apps/local_cancel_v123.py`` imports ``dex`` and runs on the live engine through a
compat Worker and Client. Its Step runs Execute locally (``StepDurability.ASYNC``) with a
heartbeat timeout and is cancelled while it runs, by an RPC or by a sibling branch's decision;
the handler is a coroutine, a sync loop or a generator yielding heartbeats. In every case the
Flow goes on at once (R96) and the handler learns of the cancellation from a heartbeat (R107),
also when the Worker closes before the next beat. The simulation's side is in
``tests/engine/test_fidelity_last_mile.py``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.compat.helpers import load_app

SEEN = {
    "async": "async cancelled:True",
    "sync": "sync cancelled",
    "generator": "generator cancelled after",
}
WRAPPED_BY = {"rpc": "wrapped 1", "rpc-at-start": "wrapped 1", "decision": "wrapped 2"}
PROMPTLY_S = 3.0
"""Far below the 20 s the local Execute would run and the client's 30 s wait."""


@pytest.mark.parametrize("by", sorted(WRAPPED_BY))
@pytest.mark.parametrize("handler", sorted(SEEN))
def test_a_cancelled_local_execute_hears_of_it_and_the_flow_goes_on(
    dex: ModuleType, tmp_path: Path, handler: str, by: str
) -> None:
    """Dex's minimum heartbeat window (10 s); the Worker closes before the next beat."""
    app = load_app("local_cancel_v123")
    output, took = app.run(f"inproc:local-{handler}-{by}", str(tmp_path), handler, by, 10.0)
    assert output == WRAPPED_BY[by] and took < PROMPTLY_S
    assert app.HEARD_BEFORE_CLOSE == []  # the next beat was 5 s away: the close sent it
    assert len(app.SEEN) == 1 and app.SEEN[0].startswith(SEEN[handler])


@pytest.mark.parametrize("handler", sorted(SEEN))
def test_the_next_heartbeat_carries_the_cancellation_while_the_worker_runs(
    dex: ModuleType, tmp_path: Path, handler: str
) -> None:
    """A 1 s window beats every 0.5 s: the handler hears before the Worker closes."""
    app = load_app("local_cancel_v123")
    output, took = app.run(
        f"inproc:beat-{handler}", str(tmp_path), handler, "decision", 1.0, linger_s=0.8
    )
    assert output == "wrapped 2" and took < PROMPTLY_S
    assert len(app.HEARD_BEFORE_CLOSE) == 1
    assert app.HEARD_BEFORE_CLOSE[0].startswith(SEEN[handler])


def test_an_rpc_cancelling_a_heartbeating_start_step_is_not_held_behind_it(
    dex: ModuleType, tmp_path: Path
) -> None:
    """RPCs wait for a start Step's first method, unless it heartbeats (docs/dex-fidelity.md)."""
    app = load_app("local_cancel_v123")
    output, took = app.run("inproc:start", str(tmp_path), "sync", "rpc-at-start", 10.0)
    assert output == "wrapped 1" and took < PROMPTLY_S
