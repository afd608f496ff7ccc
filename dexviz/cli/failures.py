"""How every ``dexviz`` subcommand fails: one line on stderr, exit 1 (2 for usage), no traceback.

A subcommand's CliError, an OSError (missing file, permission, a path too long), any dexviz
error and any other exception become ``dexviz CMD: error: <one line>``. ``--debug`` lets the
exception through with its traceback instead. Usage errors (a bad option, a wrong Flow name)
exit with 2, everything else with 1; an interrupted command exits with 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from dexviz.cli.common import EXIT_FAILED, EXIT_USAGE, CliError, describe
from dexviz.history.output_files import OutputWriteError

__all__ = ["EXIT_INTERRUPTED", "OneLineParser", "add_debug_flag", "run_reporting_failures"]

EXIT_INTERRUPTED = 130
"""What shells report for a command stopped by Ctrl-C (128 + SIGINT)."""

_DEBUG_HELP = "show the full traceback when the command fails"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` and exit with 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_debug_flag(parser: argparse.ArgumentParser) -> None:
    """Accept ``--debug`` before the subcommand and after it (in each subparser)."""
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.add_argument(
                    "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
                )


def run_reporting_failures(
    command: Callable[[argparse.Namespace], int], args: argparse.Namespace
) -> int:
    """Run ``command(args)``; turn whatever it raises into one stderr line and an exit code."""
    name = f"dexviz {getattr(args, 'command_name', '')}".rstrip()
    if getattr(args, "debug", False):
        return command(args)
    try:
        return command(args)
    except CliError as error:
        return _report(name, describe(error), error.exit_code)
    except KeyboardInterrupt:
        return _report(name, "interrupted", EXIT_INTERRUPTED)
    except OSError as error:
        return _report(name, _os_line(error), EXIT_FAILED)
    except Exception as error:  # noqa: BLE001 - the contract: one line, never a traceback
        return _report(name, _error_line(error), EXIT_FAILED)


def _report(name: str, line: str, code: int) -> int:
    print(f"{name}: error: {line}", file=sys.stderr)
    return code


def _os_line(error: OSError) -> str:
    if isinstance(error, OutputWriteError):  # already "cannot write 'FILE': reason"
        return describe(error)
    # "[Errno 36] File name too long: '...'" is noisier than "File name too long: '...'".
    if error.strerror and error.filename is not None:
        return describe(f"{error.strerror}: {str(error.filename)!r}")
    return describe(error)


def _error_line(error: Exception) -> str:
    kind = type(error)
    module = kind.__module__
    # dexviz's own errors speak for themselves; others get their type for context.
    if module.startswith("dexviz") and str(error):
        return describe(error)
    return f"{kind.__name__}: {describe(error)} (run with --debug for the traceback)"
