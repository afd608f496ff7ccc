"""The README's pictures are the ones ``make demo`` draws (scripts/readme_images.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_the_readme_shows_the_pictures_the_script_writes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("contract-edit-definition.svg", "contract-edit-timeline.png"):
        assert f"docs/images/{name}" in readme
        assert (REPO / "docs" / "images" / name).stat().st_size > 0
    assert "scripts/readme_images.py" in readme


@pytest.mark.requires_dot
@pytest.mark.slow
def test_the_readme_definition_picture_is_the_demos():
    done = subprocess.run([sys.executable, "scripts/readme_images.py", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout
