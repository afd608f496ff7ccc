"""Project-wide pytest setup: environment markers, the golden-file option, shared paths.

Markers (declared in pyproject.toml, so --strict-markers rejects typos):
- ``requires_dot``: skipped when the Graphviz ``dot`` binary is not on PATH.
- ``browser``: skipped unless Chromium and the Python ``playwright`` package are both present.
- ``notebook`` and ``slow``: informational; select or deselect them with ``-m``.

Hypothesis: the ``dexviz`` profile (no deadline); with ``CI`` set, the ``ci`` profile also
derandomizes, so every run draws the same examples.

Options: ``--update-golden`` lets golden-file tests rewrite their expected files instead of
comparing (request the ``update_golden`` fixture); ``--skip-exe`` skips every test that needs an
external program (``dot``, Chromium), ``--only-exe`` runs only those.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Property tests check what the engine does, not how fast: on a busy two-core machine Hypothesis's
# timing checks (deadline, slow data generation) fail runs whose properties hold.
settings.register_profile(
    "dexviz", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# In CI every run draws the same examples (derandomize), so a slow or failing draw is the same
# draw on the next run and on a contributor's machine (``CI=1 pytest ...``).
settings.register_profile("ci", parent=settings.get_profile("dexviz"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dexviz")

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
EXE_MARKERS = ("requires_dot", "browser")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dexviz")
    group.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite golden files from the current output instead of comparing them",
    )
    group.addoption(
        "--skip-exe", action="store_true", help="skip tests that need an external program"
    )
    group.addoption(
        "--only-exe", action="store_true", help="run only tests that need an external program"
    )


def dot_path() -> str | None:
    """Where the Graphviz ``dot`` binary is, or None."""
    return shutil.which("dot")


def chromium_path() -> str | None:
    """Where a Chromium binary is, or None."""
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _skip_reason(item: pytest.Item, config: pytest.Config) -> str | None:
    needs_exe = any(item.get_closest_marker(name) for name in EXE_MARKERS)
    if config.getoption("--skip-exe") and needs_exe:
        return "--skip-exe given"
    if config.getoption("--only-exe") and not needs_exe:
        return "--only-exe given"
    if item.get_closest_marker("requires_dot") and dot_path() is None:
        return "the Graphviz `dot` binary is not on PATH (apt-get install graphviz)"
    if item.get_closest_marker("browser"):
        if chromium_path() is None:
            return "no Chromium on PATH (apt-get install chromium)"
        if importlib.util.find_spec("playwright") is None:
            return "the playwright package is not installed (pip install -e '.[test]')"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        reason = _skip_reason(item, config)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the folder holding pyproject.toml)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when golden files should be rewritten rather than compared (``--update-golden``)."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point PATH at an empty folder, so external programs such as ``dot`` cannot be found."""
    folder = tmp_path / "empty-bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


TEST_MAX_SCHEDULES = 25_000
"""No test's exploration may run more schedules than this (the largest needs 8,458)."""


@pytest.fixture(autouse=True)
def bounded_exploration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test whose in-process exploration exceeds ``TEST_MAX_SCHEDULES``.

    Schedules for the stateless strategies, distinct states for ``"stateful"``: a bound in
    work, not wall time, so an exploding search fails at the same point on every machine, with
    the test's name, instead of running for an hour.
    """
    for module, count in (("dexviz.explore.api", "schedules"),
                          ("dexviz.explore.run_stateful", "distinct")):
        found = sys.modules.get(module)
        if found is not None:
            monkeypatch.setattr(found, "_stop_reason", _bounded(found._stop_reason, count))


def _bounded(original: Any, count: str) -> Any:
    def stop_reason(tally: Any, *args: Any) -> str | None:
        ran = getattr(tally, count)
        if ran > TEST_MAX_SCHEDULES:
            raise AssertionError(
                f"this test's exploration reached {ran} {count} (schedules or states), more "
                f"than the {TEST_MAX_SCHEDULES} a test may: pass max_schedules or a smaller case"
            )
        return original(tally, *args)  # type: ignore[no-any-return]

    return stop_reason
