"""Build dexviz's wheel and prove it works alone: installed in a fresh venv, away from the source.

Usage (from the repository root): ``.venv/bin/python scripts/check_wheel.py [--keep DIR]``.

1. ``python -m build`` writes the sdist and, from it, ``dexviz-<version>-py3-none-any.whl``
   (into a temporary folder, so ``dist/`` is left alone; building from the sdist keeps stale
   files of a local ``build/`` folder out of the wheel).
2. A new virtualenv (from the base interpreter, never the project's editable ``.venv``) gets
   ``pip install "<wheel>[all]"``.
3. In an empty folder, with no ``PYTHONPATH``, it runs ``dexviz demo``, ``dexviz report`` on the
   demo's history, and ``SimulationRun.to_html`` (the entry-point hook), and checks that
   ``dexviz`` was imported from the venv's site-packages and that the replay is complete.

Exits 0 when every step passed, 1 (with the failing step's output) otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK_IMPORT = (
    "import dexviz, sys; "
    "assert 'site-packages' in dexviz.__file__, dexviz.__file__; "
    "print('dexviz', dexviz.__version__, 'from', dexviz.__file__)"
)
CHECK_TO_HTML = """
import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
run = dexviz.simulate(ContractEditFlow(), sample_edits(3))
page = run.to_html("to_html.html", token_channel="contractEditToken").read_text()
assert 'id="dx-data"' in page and page.count("<svg") >= 2, "incomplete replay"
print("run.to_html wrote", len(page), "bytes")
"""


class StepFailed(RuntimeError):
    """One step of the check failed; the message holds its command and output."""


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run ``command`` in ``cwd``; return its output, or raise StepFailed with it."""
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise StepFailed(f"{' '.join(command)} exited {done.returncode}:\n{output}")
    return output


def base_python() -> str:
    """The interpreter the project's venv was made from (a venv's own python would leak it)."""
    return str(Path(getattr(sys, "_base_executable", sys.executable)))


def build_wheel(out: Path) -> Path:
    """Build the sdist and the wheel (from it) into ``out``; return the wheel's path."""
    run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], ROOT)
    wheels = sorted(out.glob("dexviz-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise StepFailed(f"expected one dexviz-*-py3-none-any.whl in {out}, found {wheels}")
    return wheels[0]


def install(wheel: Path, venv: Path) -> Path:
    """A fresh venv with ``wheel[all]`` installed; return its bin folder."""
    run([base_python(), "-m", "venv", str(venv)], venv.parent)
    bin_dir = venv / "bin"
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", f"{wheel}[all]"], venv.parent)
    return bin_dir


def use(bin_dir: Path, work: Path) -> None:
    """Run the installed dexviz in ``work``, outside the source tree."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    python = str(bin_dir / "python")
    print(run([python, "-c", CHECK_IMPORT], work, env).strip())
    print(run([str(bin_dir / "dexviz"), "demo", "--out", "demo"], work, env).strip())
    print(run([str(bin_dir / "dexviz"), "report", "demo/history.jsonl", "-o", "run.html",
               "--channel", "contractEditToken"], work, env).strip())
    page = (work / "run.html").read_text(encoding="utf-8")
    if 'id="dx-data"' not in page or "ContractEditFlow" not in page:
        raise StepFailed("dexviz report wrote an incomplete replay")
    print(run([python, "-c", CHECK_TO_HTML], work, env).strip())


def main(argv: list[str] | None = None) -> int:
    """Build, install and exercise the wheel; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dexviz-wheel-") as scratch:
        top = args.keep.resolve() if args.keep else Path(scratch)
        work = top / "work"
        work.mkdir(parents=True, exist_ok=True)
        try:
            wheel = build_wheel(top / "dist")
            print(f"built {wheel.name} ({wheel.stat().st_size // 1024} KiB)")
            use(install(wheel, top / "venv"), work)
        except StepFailed as error:
            print(f"wheel check FAILED: {error}", file=sys.stderr)
            return 1
    print("wheel check passed: the wheel installs and runs on its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
