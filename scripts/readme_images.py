"""Redraw the README's pictures exactly as ``make demo`` draws them.

Usage (from the repository root): ``.venv/bin/python scripts/readme_images.py [--check]``.

It runs ``dexviz demo`` (8 reviewers, seed 0, as ``make demo``) into a temporary folder and
copies its ``definition.svg`` to ``docs/images/contract-edit-definition.svg``; the timeline PNG
is the same figure the demo saves as ``timeline.svg`` (:func:`dexviz.viz.run_outputs.run_timeline`
with the token Channel), saved as ``docs/images/contract-edit-timeline.png``. With ``--check``
nothing is written: it exits 1 if the README's definition picture differs from the demo's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dexviz import History  # noqa: E402 - after the path set-up above
from dexviz.analysis.executions import build_executions  # noqa: E402
from dexviz.cli import TOKEN_CHANNEL, main  # noqa: E402
from dexviz.viz.run_outputs import run_timeline  # noqa: E402
from dexviz.viz.timeline import save_timeline  # noqa: E402

IMAGES = ROOT / "docs" / "images"
DEFINITION = IMAGES / "contract-edit-definition.svg"
TIMELINE = IMAGES / "contract-edit-timeline.png"


def draw_demo(folder: Path) -> Path:
    """Run ``dexviz demo`` into ``folder`` (its output silenced); return the folder."""
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["demo", "--out", str(folder)])
    if code != 0 or not (folder / "definition.svg").exists():
        raise SystemExit(f"dexviz demo failed (exit {code}) or wrote no definition.svg "
                         "(is Graphviz's dot installed?)")
    return folder


def main_script(argv: list[str] | None = None) -> int:
    """Redraw (or, with --check, compare) the README's pictures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        folder = draw_demo(Path(temp))
        drawn = (folder / "definition.svg").read_bytes()
        if args.check:
            same = DEFINITION.exists() and DEFINITION.read_bytes() == drawn
            print(f"{DEFINITION.relative_to(ROOT)}: {'up to date' if same else 'OUT OF DATE'}")
            return 0 if same else 1
        IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "definition.svg", DEFINITION)
        run = build_executions(History.load(folder / "history.jsonl"))
        save_timeline(run_timeline(run, TOKEN_CHANNEL), TIMELINE)
    for path in (DEFINITION, TIMELINE):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main_script())
