"""dexviz imports and runs a Flow with graphviz, matplotlib, pandas, ipywidgets and IPython blocked.

Each check runs in a fresh interpreter (``sys.executable``) whose first meta-path finder refuses
the heavy packages and records every attempt to import them, so a ``try: import pandas`` that
swallows the error is caught as well as a real import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
BLOCKED = ("graphviz", "matplotlib", "pandas", "ipywidgets", "IPython")

BLOCKER = textwrap.dedent(
    """\
    import json
    import sys

    BLOCKED = {blocked!r}
    attempts = []

    class HeavyBlocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                attempts.append(name)
                raise ModuleNotFoundError(f"{{name}} is blocked in this test", name=name)
            return None

    sys.meta_path.insert(0, HeavyBlocker())

    def report(**extra):
        loaded = sorted(
            name for name in sys.modules if name.split(".")[0] in BLOCKED
        )
        print("REPORT " + json.dumps({{"attempts": attempts, "loaded": loaded, **extra}}))
    """
).format(blocked=BLOCKED)


def _run_blocked(body: str) -> dict[str, object]:
    script = BLOCKER + textwrap.dedent(body)
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, (
        f"the script failed (exit {completed.returncode}):\n"
        f"--- stdout\n{completed.stdout}\n--- stderr\n{completed.stderr}"
    )
    reports = [line for line in completed.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(reports) == 1, completed.stdout
    return json.loads(reports[0].removeprefix("REPORT "))


def test_blocker_really_blocks_heavy_packages():
    report = _run_blocked(
        """\
        try:
            import pandas.core.frame
        except ModuleNotFoundError as error:
            report(error=str(error))
        """
    )
    assert report["attempts"] == ["pandas"]
    assert report["loaded"] == []
    assert "blocked" in str(report["error"])


def test_import_dexviz_loads_no_heavy_package():
    report = _run_blocked(
        """\
        import dexviz
        report(file=dexviz.__file__)
        """
    )
    assert report["file"], "dexviz was imported as a namespace package (no __init__.py)"
    assert report["attempts"] == [], f"import dexviz tried to import {report['attempts']}"
    assert report["loaded"] == []


@pytest.mark.slow
def test_contract_edit_flow_completes_with_heavy_packages_blocked():
    report = _run_blocked(
        """\
        import dexviz
        from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

        run = dexviz.simulate(ContractEditFlow(), sample_edits(8), seed=3)
        lines = run.history.to_jsonl().splitlines()
        report(status=run.result.status.name, history_lines=len(lines))
        """
    )
    assert report["status"] == "COMPLETED"
    assert report["history_lines"] > 0
    assert report["attempts"] == [], f"the simulation tried to import {report['attempts']}"
    assert report["loaded"] == []
