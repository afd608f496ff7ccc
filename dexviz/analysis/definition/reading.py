"""Read a Flow source file's text safely: regular files only, bounded size, one named error.

A FIFO, ``/dev/zero``, a directory or a path too long for the system never hangs the analysis
or floods memory; each is a :class:`DefinitionSourceError` (a missing file stays
``FileNotFoundError``) whose message names the file and says what is wrong in one line.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import stat
from collections.abc import Callable
from typing import Any

from dexviz.analysis.definition.errors import DefinitionSourceError

__all__ = ["MAX_SOURCE_BYTES", "read_source_text", "shown_path"]

MAX_SOURCE_BYTES = 16 * 1024 * 1024
"""A Flow source larger than this (16 MiB) is refused rather than parsed."""
_SHOWN_PATH_CHARS = 160


def shown_path(path: str) -> str:
    """``path`` for a message: kept whole unless it is absurdly long, then elided in the middle."""
    if len(path) <= _SHOWN_PATH_CHARS:
        return path
    return f"{path[:80]}...{path[-60:]} ({len(path)} characters)"


def read_source_text(path: str) -> str:
    """The decoded text of the Flow source file ``path`` (PEP 263 coding cookies honoured).

    Raises:
        FileNotFoundError: Nothing exists at ``path``.
        DefinitionSourceError: ``path`` is not a readable regular file of at most
            ``MAX_SOURCE_BYTES``, or its bytes are not valid in the file's encoding.
    """
    data = _read_bytes(path)
    try:
        return importlib.util.decode_source(data)
    except SyntaxError as error:  # an unknown coding cookie, or bad UTF-8 in its first lines
        raise _unreadable(path, f"cannot decode: {error.msg}", error.lineno) from None
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        raise _unreadable(
            path, f"cannot decode: byte 0x{byte} is not valid {error.encoding}", line
        ) from None
    except LookupError as error:  # a codec that exists by name but cannot decode
        raise _unreadable(path, f"cannot decode: {error}") from None


def _read_bytes(path: str) -> bytes:
    info = _os_call(path, os.stat)
    _check_regular(info.st_mode, info.st_size, path)
    # O_NONBLOCK: should the path turn into a FIFO after the stat, opening still won't wait.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd: int = _os_call(path, lambda p: os.open(p, flags))
    try:
        info = os.fstat(fd)
        _check_regular(info.st_mode, info.st_size, path)
        return _read_regular(fd, path)
    finally:
        os.close(fd)


def _os_call(path: str, call: Callable[[str], Any]) -> Any:
    try:
        return call(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{shown_path(path)}: no such Flow source file") from None
    except (OSError, ValueError) as error:
        raise _unreadable(path, _os_reason(error)) from None


def _check_regular(mode: int, size: int, path: str) -> None:
    if stat.S_ISDIR(mode):
        raise _unreadable(path, "is a directory, not a Flow source file")
    if not stat.S_ISREG(mode):
        raise _unreadable(path, f"is a {_kind(mode)}, not a regular Flow source file")
    if size > MAX_SOURCE_BYTES:
        raise _unreadable(
            path, f"is {size} bytes; Flow sources over {MAX_SOURCE_BYTES} are refused"
        )


def _read_regular(fd: int, path: str) -> bytes:
    chunks = []
    size = 0
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_SOURCE_BYTES:  # the file grew while it was read
            raise _unreadable(path, f"is over {MAX_SOURCE_BYTES} bytes; refused")
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def _os_reason(error: OSError | ValueError) -> str:
    if isinstance(error, ValueError):  # an embedded NUL character in the path
        return f"is not a usable path ({error})"
    if error.errno == errno.ENAMETOOLONG:
        return "cannot be opened: the path is too long for this system"
    return f"cannot be opened: {error.strerror or error}"


def _unreadable(path: str, reason: str, line: int | None = None) -> DefinitionSourceError:
    return DefinitionSourceError(shown_path(path), reason, code="unreadable_source", line=line)
