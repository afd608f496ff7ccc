"""What a test counts as a leftover: warnings and asyncio log lines from finalizers."""

from __future__ import annotations

import gc
import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(f"asyncio log: {record.getMessage()}")


@contextmanager
def nothing_left() -> Iterator[list[str]]:
    """Collect every leftover report of the block, a full GC at its end included.

    RuntimeWarning and ResourceWarning are errors (raised inside a finalizer they reach
    ``sys.unraisablehook``, which is captured too), and asyncio's logger is recorded.
    """
    gc.collect()
    found: list[str] = []
    logger = logging.getLogger("asyncio")
    handler = _Collect(found)
    logger.addHandler(handler)
    hook = sys.unraisablehook
    sys.unraisablehook = lambda raised: found.append(f"unraisable: {raised.exc_value!r}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("error", ResourceWarning)
            yield found
            gc.collect()
    finally:
        sys.unraisablehook = hook
        logger.removeHandler(handler)
