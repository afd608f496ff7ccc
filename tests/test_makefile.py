"""``make notebook`` works as root; ``make test`` prints why tests were skipped."""

from __future__ import annotations

import shutil
import subprocess
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
