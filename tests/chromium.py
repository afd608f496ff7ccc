"""Chromium for the browser tests: where it is, and the flags they start it with."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip
"""Headless in a container: no sandbox, GPU, shared-memory files or background traffic."""


def chromium_path() -> str:
    """The Chromium (or Chrome) executable on PATH; skips the test when there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on PATH (apt-get install chromium)")
