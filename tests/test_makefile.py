"""``make notebook`` works as root; ``make test`` prints why tests were skipped; ``make demo``
installs only what the demo needs, ``make test`` everything."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str) -> str:
    # -n prints the recipe without running anything.
    done = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout


def test_make_notebook_adds_allow_root_only_for_root():
    line = next(x for x in _dry_run("notebook").splitlines() if "jupyter lab" in x)
    as_root = subprocess.run(["bash", "-c", line.replace("id -u", "echo 0").replace(
        ".venv/bin/jupyter", "echo")], capture_output=True, text=True, check=True).stdout
    as_user = subprocess.run(["bash", "-c", line.replace("id -u", "echo 1000").replace(
        ".venv/bin/jupyter", "echo")], capture_output=True, text=True, check=True).stdout
    assert as_root.split() == ["lab", "--allow-root", "notebooks/"]
    assert as_user.split() == ["lab", "notebooks/"]


def test_make_test_reports_skip_reasons():
    assert "pytest -rs tests/" in _dry_run("unit")
    assert "pytest -rs --nbval-lax" in _dry_run("notebooks-test")


def _installed_extras(target: str) -> set[str]:
    """The extras the ``pip install -e '.[...]'`` of ``target``'s recipe installs."""
    # -B: every target counts as out of date, so the install recipe prints even in a set-up
    # checkout whose stamps are current.
    done = subprocess.run(["make", "-n", "-B", target], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    found = re.findall(r"pip install -e '\.\[([^\]]*)\]'", done.stdout)
    assert len(found) == 1, done.stdout
    return set(found[0].split(","))


def test_make_demo_installs_only_what_the_demo_draws_with():
    assert _installed_extras("demo") == set(DEMO_EXTRAS)


def test_make_test_and_the_other_targets_install_everything():
    for target in ("unit", "lint", "notebook", "docs", "wheel-check"):
        assert _installed_extras(target) == {"all", "test", "docs"}, target


def test_the_readme_says_what_each_make_target_installs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"dexviz[{','.join(DEMO_EXTRAS)}]" in readme
    assert "dexviz[all,test,docs]" in readme


# Every optional package that no extra of `make demo` installs (notebook, progress, server,
# cluster): the demo must never import one.
_NOT_FOR_THE_DEMO = ("ipywidgets", "IPython", "jupyterlab", "tqdm", "grpc", "google", "dask",
                     "distributed")
DEMO_EXTRAS = ("graph", "plot", "table")

_BLOCKED_DEMO = """
import sys
BLOCKED = {blocked!r}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{{name}} is not installed by make demo", name=name)
        return None

sys.meta_path.insert(0, Blocker())
import dexviz.cli
sys.exit(dexviz.cli.main(["demo", "--out", sys.argv[1]]))
"""


@pytest.mark.slow
def test_the_demo_runs_with_only_the_demo_extras(tmp_path):
    script = _BLOCKED_DEMO.format(blocked=_NOT_FOR_THE_DEMO)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    written = {p.name for p in tmp_path.iterdir()}
    assert {"history.jsonl", "timeline.svg", "executions.csv"} <= written, written
