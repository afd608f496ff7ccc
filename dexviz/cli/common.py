"""What every ``dexviz`` subcommand shares: exit codes, the usage error, small parsers."""

from __future__ import annotations

import argparse
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A problem with the user's input, reported as one line on stderr with exit code 2."""


def describe(error: BaseException) -> str:
    """One line for stderr, whatever the error's message looks like."""
    # Multi-line messages (an install hint, say) are joined so stderr gets exactly one line.
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return text or type(error).__name__


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def prepare_out_dir(out_dir: Path) -> None:
    """Create the output folder, or raise CliError naming it."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot create output folder {str(out_dir)!r}: {error}") from error


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
    """Raise CliError unless ``path`` is an existing file."""
    if not path.exists():
        raise CliError(f"no such file: {str(path)!r}")
    if not path.is_file():
        raise CliError(f"not a file: {str(path)!r}")
