"""The analyser reads source with ``ast`` only: it never imports or runs the Flow's file.

The fixture import_side_effect.py appends to a marker file whenever its module code, class
body, decorator or default arguments run. Analysing it must leave no marker; importing it
(the positive control, so this test can fail) does.
"""

from __future__ import annotations

import os
import subprocess
import sys

from dexviz.analysis.definition import analyze_flow, to_json, to_markdown
from tests.analysis.definition.helpers import FIXTURES, REPO_ROOT

FIXTURE = FIXTURES / "import_side_effect.py"


def test_analysing_the_file_does_not_run_it(tmp_path, monkeypatch):
    marker = tmp_path / "marker.txt"
    monkeypatch.setenv("DEXVIZ_IMPORT_MARKER", str(marker))
    modules_before = set(sys.modules)
    graph = analyze_flow(FIXTURE)
    to_json(graph)
    to_markdown(graph)
    assert graph.flow_name == "MarkerFlow" and graph.start_step_id == "step:OnlyStep"
    assert not marker.exists()
    assert not [m for m in set(sys.modules) - modules_before if "import_side_effect" in m]


def test_importing_the_file_does_write_the_marker(tmp_path):
    marker = tmp_path / "marker.txt"
    env = {**os.environ, "DEXVIZ_IMPORT_MARKER": str(marker)}
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('side_effect', {str(FIXTURE)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['side_effect'] = module\n"
        "spec.loader.exec_module(module)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, check=True)
    assert marker.read_text(encoding="utf-8").splitlines() == [
        "module", "class body", "default", "decorator OnlyStep",
    ]
