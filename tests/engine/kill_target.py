"""The process the kill -9 test kills: starts (or resumes) contract edits in a SQLite store.

Run as ``python -m tests.engine.kill_target DB FLOWS``: it opens the store (resuming whatever
is open there), starts the Flows ``edits-0`` .. ``edits-{FLOWS-1}`` that are not stored yet,
prints ``ready``, runs until idle, and prints ``done``.
"""

from __future__ import annotations

import sys

import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits


def main(path: str, flows: int) -> None:
    """Resume, start what is missing, run to the end."""
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=7, store=dexviz.SQLiteStore(path, durability="normal"))
    print("ready", flush=True)
    stored = set(engine.flow_ids())
    client = engine.client()
    for number in range(flows):
        flow_id = f"edits-{number}"
        if flow_id not in stored:
            client.start_flow(flow, flow_id, sample_edits(4))
            for _ in range(40):  # interleave starts with work, so kills land anywhere
                engine.step()
    engine.run_until_idle()
    engine.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
