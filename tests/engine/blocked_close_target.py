"""Run as a script by test_engine_close: 8 live sync handlers block forever, then close().

Prints how long close() took and the warning it gave; the process must then exit by itself.
"""

from __future__ import annotations

import threading
import time
import warnings

from dexviz import Context, Engine, Step, StepDecision
from tests.engine.flows_a import AdHocFlow

FOREVER = threading.Event()
STARTED = threading.Semaphore(0)


class Stuck(Step[int]):
    """A sync Execute that never returns."""

    def execute(self, context: Context, n: int) -> StepDecision:
        STARTED.release()
        FOREVER.wait()
        raise AssertionError("unreachable")


def main() -> None:
    flow = AdHocFlow("Stuck", Stuck())
    engine = Engine([flow], mode="live")
    client = engine.client()
    for n in range(8):
        client.start_flow(flow, f"stuck-{n}", n)
    for _ in range(8):
        assert STARTED.acquire(timeout=10)
    began = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine.close()
    print(f"closed in {time.monotonic() - began:.1f} s")
    for warning in caught:
        print(f"warning: {warning.message}")


if __name__ == "__main__":
    main()
