"""What every ``dexviz`` subcommand shares: exit codes, the usage error, small parsers."""

from __future__ import annotations

import argparse
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


RUN_OUTPUT_NAMES = (
    "history.jsonl",
    "graph.svg",
    "graph.dot",
    "timeline.svg",
    "executions.csv",
    "exclusive-sections.txt",
)
"""The files ``write_run_outputs`` may write into an output folder."""
DETAIL_LINES = 10
"""At most this many detail lines per table on stdout (records, holdings, overlaps); a note
says how many more there are, and the written files hold every row."""
MAX_MESSAGE_CHARS = 600
"""A stderr line longer than this is elided in the middle (a 5,000-character path, say)."""


class CliError(Exception):
    """A command that cannot do its work (missing file, bad source, damaged history): exit 1.

    Reported as one line on stderr.
    """

    exit_code = EXIT_FAILED


class UsageError(CliError):
    """The command line itself is wrong (an option's value, a Flow name): exit 2."""

    exit_code = EXIT_USAGE


def describe(error: BaseException | str) -> str:
    """One line for stderr, whatever the error's message looks like."""
    # Multi-line messages (an install hint, say) are joined so stderr gets exactly one line.
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    if len(text) > MAX_MESSAGE_CHARS:
        half = MAX_MESSAGE_CHARS // 2
        text = f"{text[:half]} ... {text[-half:]}"
    return text or type(error).__name__


def refuse_symlinks(*paths: Path) -> None:
    """Raise CliError if any of ``paths`` is a symbolic link: dexviz never writes through one.

    dexviz creates no links itself, so a link where it is about to write was put there by
    someone else, and following it could overwrite any file the user can write.
    """
    for path in paths:
        if path.is_symlink():
            raise CliError(
                f"refusing to write through the symbolic link {str(path)!r} "
                "(remove it or choose another --out)"
            )


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def prepare_out_dir(out_dir: Path, names: tuple[str, ...] = ()) -> None:
    """Create the output folder, or raise CliError naming it.

    The folder, and each of the ``names`` the command will write in it, must not be a
    symbolic link.
    """
    refuse_symlinks(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(
            f"cannot create output folder {str(out_dir)!r}: {describe(error)}"
        ) from error
    refuse_symlinks(*(out_dir / name for name in names))


def parse_flow_spec(spec: str) -> tuple[Path, str | None]:
    """Split ``FILE.py[:FlowName]`` into the path and the optional Flow class name.

    Args:
        spec: The command-line argument.

    Returns:
        The path and the Flow name, or None when no name was given.
    """
    path, sep, name = spec.rpartition(":")
    if sep and path and name.isidentifier():
        return Path(path), name
    return Path(spec), None


def check_source(path: Path) -> None:
    """Raise CliError unless ``path`` is an existing regular file."""
    try:
        exists, regular = path.exists(), path.is_file()
    except (OSError, ValueError) as error:  # a path too long to look at, a NUL in it
        raise CliError(f"cannot read {str(path)!r}: {describe(error)}") from error
    if not exists:
        raise CliError(f"no such file: {str(path)!r}")
    if not regular:
        raise CliError(f"not a file: {str(path)!r}")
