"""Failure details of an attempt — error type, message, stack trace — as Dex's worker reports them.

Dex's worker sends, for every failed attempt, the error's ``module.QualifiedName``, its message
and the formatted traceback (which ends with the message); a Step that is retrying exposes the
last of these as its "last failure info". The traceback kept here starts at the handler: the
engine's own frames (runners, the event loop) that called it are left out, and file paths are
relative to their import root, so a seeded simulation records the same text on every machine.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from dexviz.sdk.errors import RetryAfterError

# Found by name, not by depth, so the module may sit anywhere inside the engine package.
_ENGINE_DIR = next(p for p in Path(__file__).resolve().parents if p.name == "engine")
_PACKAGE_ROOT = _ENGINE_DIR.parent.parent
_ENGINE = str(_ENGINE_DIR)
_STDLIB = str(Path(sysconfig.get_paths()["stdlib"]).resolve())
_FILE_LINE = re.compile(r'^(\s*File ")([^"]+)(", line \d+)', re.MULTILINE)


@dataclass(frozen=True)
class StepMethodFailure:
    """A method attempt's failure (Dex's ``StepMethodFailure``, "last failure info").

    Attributes:
        method: ``wait_for`` or ``execute``.
        attempt: The 1-based attempt that failed.
        error_type: The error's ``module.QualifiedName`` (a ``retry_after``'s cause).
        detail: The error's message.
        stack_trace: The formatted traceback from the handler down ("" when the attempt had
            none: a timeout, a lost heartbeat, an injected fault).
    """

    method: str
    attempt: int
    error_type: str
    detail: str
    stack_trace: str

    @classmethod
    def of(cls, error: BaseException, method: str, attempt: int) -> StepMethodFailure:
        """The failure details of ``error`` raised by attempt ``attempt`` of ``method``."""
        cause = error.cause if isinstance(error, RetryAfterError) else error
        return cls(method, attempt, error_type_name(cause), str(cause), stack_trace(error))


def error_type_name(error: BaseException) -> str:
    """Dex reports a handler error's type as ``module.QualifiedName``.

    An engine error that names its ``recorded_type`` itself (not inherited: a user's subclass is
    named by its own module) is recorded under that name, which stays when its module moves.
    """
    cls = type(error)
    recorded = cls.__dict__.get("recorded_type")
    if isinstance(recorded, str):
        return recorded
    return f"{cls.__module__}.{cls.__qualname__}"


def stack_trace(error: BaseException) -> str:
    """The handler's formatted traceback of ``error``; "" if it was never raised.

    For a ``retry_after`` error it is that error's own traceback (whose chain shows the cause
    when it was raised while handling it), as Dex's SDK reports it.
    """
    tb = _from_handler(error.__traceback__)
    if tb is None:
        return ""
    key = _trace_key(error, tb)
    text = _TRACES.get(key) if key is not None else None
    if text is None:
        lines = traceback.TracebackException(type(error), error, tb).format()
        text = _FILE_LINE.sub(
            lambda m: m.group(1) + _relative(m.group(2)) + m.group(3), "".join(lines)
        )
        if key is not None:
            if len(_TRACES) >= _TRACES_KEPT:
                _TRACES.clear()
            _TRACES[key] = text
    return text


_TRACES: dict[tuple[object, ...], str] = {}
"""Formatted tracebacks by what they show: a retried or replayed failure raises from the same
places again, and formatting one (source lines, the ``^^^`` marks parsed from each) costs
more than the rest of a failed attempt."""
_TRACES_KEPT = 512


def _trace_key(error: BaseException, tb: TracebackType) -> tuple[object, ...] | None:
    """What the formatted text depends on, or None when it may depend on more.

    The frames (their code, instruction and line), the error's type and message, and the
    import path and working directory the file names are made relative to. An error with a
    cause, a context or notes, a SyntaxError and an exception group show more than that.
    """
    if (
        error.__cause__ is not None
        or error.__context__ is not None
        or getattr(error, "__notes__", None) is not None
        or isinstance(error, (SyntaxError, BaseExceptionGroup))
    ):
        return None
    frames = []
    current: TracebackType | None = tb
    while current is not None:
        frames.append((current.tb_frame.f_code, current.tb_lasti, current.tb_lineno))
        current = current.tb_next
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - traceback formats a broken __str__ itself
        return None
    return (type(error), message, tuple(frames), tuple(sys.path), os.getcwd())


def _from_handler(tb: TracebackType | None) -> TracebackType | None:
    """Skip the leading frames of the engine and the standard library that called the handler."""
    while tb is not None and tb.tb_next is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (name.startswith(_ENGINE) or name.startswith(_STDLIB)):
            break
        tb = tb.tb_next
    return tb


def _relative(filename: str) -> str:
    """``filename`` relative to the longest import root holding it, else its base name."""
    if not os.path.isabs(filename):
        return filename
    # Asked for every frame of every failed attempt: the answer is kept per import path.
    return _relative_to(filename, tuple(sys.path), os.getcwd())


@functools.lru_cache(maxsize=1024)
def _relative_to(filename: str, import_path: tuple[str, ...], cwd: str) -> str:
    roots = [str(_PACKAGE_ROOT), *(entry for entry in import_path if entry)]
    best = ""
    for root in roots:
        resolved = str(Path(cwd, root).resolve())
        if filename.startswith(resolved.rstrip("/") + "/") and len(resolved) > len(best):
            best = resolved
    return Path(filename).relative_to(best).as_posix() if best else Path(filename).name
