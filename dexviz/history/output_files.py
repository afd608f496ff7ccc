"""Writing the files a user asked for: whole or not at all, and an error that names the file.

Every writer of user outputs (a saved history, the HTML report, graph and timeline pictures, the
CLI's ``--out`` files) writes into a temporary file beside the target and renames it over the
target only once everything was written, so a full disk, a file-size limit or an error halfway
leaves no partial file and keeps an existing file as it was. An ``OSError`` comes back as
:class:`OutputWriteError`, which names the file (``[Errno 27] File too large`` alone says not
which). Lives in ``history``, the lowest layer, so that every layer above can use it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from os import PathLike
from pathlib import Path

__all__ = ["OutputWriteError", "output_file", "write_output_bytes", "write_output_text"]

_PREFIX = "."
_SUFFIX = ".part"


class OutputWriteError(OSError):
    """A user output could not be written; ``filename`` is the file, and nothing was left."""

    def __str__(self) -> str:
        reason = self.strerror or (str(self.args[0]) if self.args else "write failed")
        return f"cannot write {str(self.filename)!r}: {reason}"


def _temporary(target: Path) -> Path:
    """A new empty file beside ``target``, created with the permissions a plain write gives."""
    while True:
        candidate = target.with_name(f"{_PREFIX}{target.name}.{os.urandom(4).hex()}{_SUFFIX}")
        try:
            # 0o666 filtered by the umask, as open(..., "w") would; O_EXCL never reuses a file.
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return candidate


def _failed(target: Path, error: OSError) -> OutputWriteError:
    return OutputWriteError(error.errno or 0, error.strerror or str(error), str(target))


@contextlib.contextmanager
def output_file(path: str | PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s content to; rename it over ``path`` at the end.

    A symlink is written through (its target is replaced). Whatever the block raises, the
    temporary file is removed and ``path`` is untouched.

    Raises:
        OutputWriteError: an OSError while creating, writing or renaming, naming ``path``.
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        temporary = _temporary(target)
    except OSError as error:
        raise _failed(Path(path), error) from error
    try:
        yield temporary
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OutputWriteError):
            raise
        raise _failed(Path(path), error) from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_output_text(path: str | PathLike[str], text: str, *, newline: str | None = None) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; return ``path`` as a Path.

    Raises:
        OutputWriteError: the file could not be written (nothing is left of the attempt).
    """
    with output_file(path) as temporary:
        with temporary.open("w", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
    return Path(path)


def write_output_bytes(path: str | PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all; return ``path`` as a Path.

    Raises:
        OutputWriteError: the file could not be written (nothing is left of the attempt).
    """
    with output_file(path) as temporary:
        temporary.write_bytes(data)
    return Path(path)
