"""``dexviz run`` and ``dexviz history``: simulate a Flow from a file, or reread a saved run.

Both write the run's views: history, lineage graph, timeline and executions table.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from dexviz.cli.common import (
    DETAIL_LINES,
    EXIT_FAILED,
    EXIT_OK,
    RUN_OUTPUT_NAMES,
    CliError,
    UsageError,
    check_source,
    describe,
    parse_flow_spec,
    prepare_out_dir,
    refuse_symlinks,
)
from dexviz.cli.dex_input import add_dex_arguments, dex_source
from dexviz.cli.stored import is_sqlite, stored_history


def add_run_parser(subparsers: Any) -> None:
    """Register ``dexviz run``."""
    run = subparsers.add_parser(
        "run",
        help="simulate a Flow from a Python file and write its views",
        description=(
            "Import FILE.py, simulate its Flow (the one named after ':' when there are several) "
            "with the JSON input, and write history.jsonl, graph.svg, timeline.svg and "
            "executions.csv into --out."
        ),
    )
    run.add_argument("source", metavar="FILE.py[:FlowName]")
    run.add_argument("--input", default="null", help="the start input as JSON (default: null)")
    run.add_argument("--seed", type=int, default=0, help="simulation seed (default: %(default)s)")
    run.add_argument("--out", default="run-output", help="output folder (default: %(default)s)")
    run.add_argument("--channel", help="a token Channel to check for exclusive sections")
    run.set_defaults(command=cmd_run, command_name="run")


def add_history_parser(subparsers: Any) -> None:
    """Register ``dexviz history``."""
    history = subparsers.add_parser(
        "history",
        help="summarise a saved history.jsonl (or a stored run) and redraw its views",
        description=(
            "Load a history written by dexviz (to_jsonl), or one Flow's history from a SQLite "
            "store (runs.db --flow ID), and print its summary."
        ),
    )
    history.add_argument("path", metavar="HISTORY.jsonl|RUNS.db|DEX.json", nargs="?")
    history.add_argument("--flow", help="the Flow id to read from a SQLite store")
    history.add_argument("--out", help="also write the views into this folder")
    history.add_argument("--channel", help="a token Channel to check for exclusive sections")
    add_dex_arguments(history)
    history.set_defaults(command=cmd_history, command_name="history")


def load_flow(path: Path, name: str | None) -> Any:
    """Import ``path`` and instantiate its Flow class (the one called ``name`` if given)."""
    import dexviz

    module_name = f"_dexviz_run_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # a module that calls sys.exit() on import
        raise CliError(f"importing {str(path)!r} failed: {describe(error)}") from error
    visible: dict[str, type[dexviz.Flow[Any]]] = {
        key: value
        for key, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, dexviz.Flow) and value is not dexviz.Flow
    }
    flows = {v.__name__: v for v in visible.values() if v.__module__ == module_name}
    if name is not None:
        # FILE.py:Name may name a Flow the module imports from elsewhere (a thin entry point).
        flows = {**visible, **flows}
        if name not in flows:
            raise UsageError(
                f"{str(path)!r} has no Flow class {name!r} (found: {sorted(flows)})"
            )
        return flows[name]()
    if len(flows) != 1:
        found = sorted(flows) or "none"
        raise UsageError(
            f"{str(path)!r} defines {len(flows)} Flow classes ({found}); write FILE.py:Name"
        )
    return next(iter(flows.values()))()


def start_input(flow: Any, text: str) -> Any:
    """Decode ``--input`` JSON as ``flow``'s start Step input; a misfit is a usage error."""
    import dexviz

    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"--input is not JSON: {error.msg} at column {error.colno}") from error
    definition = dexviz.Registry([flow], allow_async_handlers=True).definition(flow)
    if definition.start is None:
        return None
    codecs = dexviz.CodecRegistry()
    try:
        return codecs.from_json_ready(definition.start.input_type, data)
    except Exception as error:
        detail = describe(error)
        raise UsageError(f"--input does not fit the start Step's input: {detail}") from error


def cmd_run(args: argparse.Namespace) -> int:
    """Simulate a Flow from a file and write its views."""
    import dexviz

    path, name = parse_flow_spec(args.source)
    check_source(path)
    out = Path(args.out)
    refuse_symlinks(out, *(out / file for file in RUN_OUTPUT_NAMES))  # before simulating
    flow = load_flow(path, name)
    try:
        run = dexviz.simulate(flow, start_input(flow, args.input), seed=args.seed)
    except CliError:
        raise
    except Exception as error:
        raise CliError(describe(error)) from error
    return write_views(run.history, Path(args.out), args.channel)


def cmd_history(args: argparse.Namespace) -> int:
    """Summarise a saved history (and redraw its views with --out)."""
    import dexviz

    history = dex_source(args)
    path = Path(args.path or "")
    if history is not None:
        pass
    elif is_sqlite(path):
        history = stored_history(path, args.flow)
    elif args.flow is not None:
        raise UsageError(f"--flow reads a SQLite store; {str(path)!r} is not one")
    else:
        try:
            history = dexviz.History.load(path)
        except dexviz.HistoryFormatError as error:
            raise CliError(str(error)) from error
    check_channel(history, args.channel, path)
    if args.out is None:
        from dexviz.viz.run_outputs import summarize_run

        summary = summarize_run(history, channel=args.channel, max_rows=DETAIL_LINES)
        print(summary)
        return _exit_code(summary)
    return write_views(history, Path(args.out), args.channel)


def check_channel(history: Any, channel: str | None, source: Path | None = None) -> None:
    """Raise CliError unless ``channel`` is a Channel the Flow declares (with a suggestion).

    ``source``: the history file the Flow was read from, named in the error.
    """
    if channel is None:
        return
    from dexviz.analysis.exclusive import holdings

    try:
        holdings(history, channel)
    except ValueError as error:
        where = "" if source is None else f"{source}: "
        raise UsageError(f"--channel: {where}{error}") from None


def write_views(history: Any, out_dir: Path, channel: str | None) -> int:
    """Write the views of ``history`` into ``out_dir``, print the summary; 1 if a check fails."""
    from dexviz.viz.run_outputs import summarize_run, write_run_outputs

    check_channel(history, channel)
    prepare_out_dir(out_dir, RUN_OUTPUT_NAMES)
    paths = write_run_outputs(history, out_dir, channel=channel)
    summary = summarize_run(history, channel=channel, max_rows=DETAIL_LINES)
    print(summary)
    for path in paths.values():
        print(f"wrote {path}")
    return _exit_code(summary)


def _exit_code(summary: Any) -> int:
    """1 when the run did not complete (FAILED, CANCELED, TERMINATED) or a section overlapped."""
    failed = summary.status in ("FAILED", "CANCELED", "TERMINATED")
    return (
        EXIT_FAILED if failed or not summary.ok else EXIT_OK
    )
