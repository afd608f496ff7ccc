"""Re-execute the tutorial notebooks in fresh kernels and save them with small, stable outputs.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python scripts/run_notebooks.py                   # every notebooks/*.ipynb
    .venv/bin/python scripts/run_notebooks.py notebooks/02-critical-section.ipynb
    .venv/bin/python scripts/run_notebooks.py --check           # execute, report, write nothing

Each notebook runs top to bottom in a new kernel of the interpreter running this script, with
``notebooks/`` as its working directory, as ``make test`` runs nbval (``--nbval-current-env``).
A notebook is written back only when every cell ran without an error. Before writing, outputs
are made small and stable: split stream outputs are merged, a graph's inline-SVG ``text/html``
copy is dropped (its ``image/svg+xml`` stays: what nbconvert, nbviewer and GitHub show), rich
outputs (SVG, PNG, JPEG, HTML) larger than ``--max-output-kb`` are dropped (their ``text/plain``
line stays) except a
Debugger's static snapshot, kept up to ``--max-snapshot-kb`` because it is what the notebook
shows without a kernel (nbconvert, nbviewer, GitHub), widget state,
widget views and execution timings are not stored, and the notebook metadata keeps only the
kernelspec and the language. The script exits 1 if a notebook fails or runs longer than
``--max-seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import ipykernel.kernelspec
import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
RICH_TYPES = ("image/svg+xml", "image/png", "image/jpeg", "text/html")
# Widget views point at models whose state is not saved: a saved notebook could only show
# "model not found" for them, so only their text/plain line is kept.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# The text/html a Debugger displays beside its widget (dexviz.widgets.snapshot).
SNAPSHOT_MARK = 'class="dexviz-debugger dx-static"'
# The text/html a graph displays beside its image/svg+xml: the same SVG, inline, so that a live
# JupyterLab fits it to the output's width (dexviz.viz.render). Saved, it only doubles the size.
GRAPH_HTML_MARK = '<div class="dexviz-graph">'
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class CurrentInterpreter(KernelSpecManager):  # type: ignore[misc]
    """Every kernel name means this interpreter (as nbval's ``--nbval-current-env``).

    A ``python3`` kernelspec installed elsewhere (for example in ``~/.local``) would otherwise
    win and run the notebooks without this virtualenv's dexviz.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        """The spec that starts ipykernel with ``sys.executable``, whatever the name."""
        del kernel_name
        return self.kernel_spec_class(
            resource_dir=ipykernel.kernelspec.RESOURCES, **ipykernel.kernelspec.get_kernel_dict()
        )


def execute(path: Path, timeout: int) -> tuple[Any, float]:
    """Run ``path`` in a fresh kernel; return the executed notebook and the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        km=KernelManager(kernel_name="python3", kernel_spec_manager=CurrentInterpreter()),
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
        record_timing=False,
    )
    started = time.monotonic()
    client.execute()
    return notebook, time.monotonic() - started


def coalesce_streams(outputs: list[Any]) -> list[Any]:
    """Merge consecutive stream outputs of one stream, which the kernel splits at random."""
    merged: list[Any] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            output.output_type == "stream"
            and last is not None
            and last.output_type == "stream"
            and last.name == output.name
        ):
            last.text += output.text
        else:
            merged.append(output)
    return merged


def _limit(mime: str, value: object, max_bytes: int, snapshot_bytes: int) -> int:
    """The size limit of one rich output: a Debugger snapshot has its own."""
    is_snapshot = mime == "text/html" and SNAPSHOT_MARK in str(value)
    return snapshot_bytes if is_snapshot else max_bytes


def shrink(notebook: Any, max_bytes: int, snapshot_bytes: int = 0) -> list[str]:
    """Merge streams, drop oversized rich outputs and volatile metadata; return what was dropped."""
    dropped = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)
        cell.outputs = coalesce_streams(cell.outputs)
        for output in cell.outputs:
            data = output.get("data", {})
            data.pop(WIDGET_VIEW, None)
            if "image/svg+xml" in data and str(data.get("text/html", "")).startswith(
                GRAPH_HTML_MARK
            ):
                del data["text/html"]
            for mime in RICH_TYPES:
                size = len(str(data.get(mime, "")).encode("utf-8"))
                if size > _limit(mime, data.get(mime), max_bytes, snapshot_bytes):
                    del data[mime]
                    dropped.append(f"cell {number}: {mime} ({size // 1024} KB)")
    notebook.metadata = {
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    }
    return dropped


def main(argv: list[str] | None = None) -> int:
    """Execute the notebooks named on the command line (default: all); see the module doc."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="execute and report; write nothing")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="fail a notebook that runs longer (default 60)",
    )
    parser.add_argument(
        "--max-output-kb",
        type=int,
        default=45,
        help="drop rich outputs larger than this (default 45)",
    )
    parser.add_argument(
        "--max-snapshot-kb",
        type=int,
        default=190,
        help="keep a Debugger's static snapshot up to this size (default 190)",
    )
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    failed = False
    for path in paths:
        try:
            notebook, seconds = execute(path, args.timeout)
        except CellExecutionError as error:
            print(f"FAIL {path.name}: a cell raised\n{error}", file=sys.stderr)
            failed = True
            continue
        dropped = shrink(notebook, args.max_output_kb * 1024, args.max_snapshot_kb * 1024)
        slow = seconds > args.max_seconds
        failed |= slow
        status = "SLOW" if slow else "ok"
        note = " (not written)" if args.check else ""
        print(f"{status:<4} {path.name}: {seconds:5.1f} s{note}")
        for line in dropped:
            print(f"       dropped {line}")
        if not args.check:
            nbformat.validate(notebook)
            nbformat.write(notebook, path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
