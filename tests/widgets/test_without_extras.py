"""The Debugger model and its static snapshot work with every heavy package blocked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """\
    import json, sys

    BLOCKED = {"graphviz", "matplotlib", "pandas", "ipywidgets", "IPython"}

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"{name} is blocked", name=name)
            return None

    sys.meta_path.insert(0, Blocker())
    import dexviz
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
    from dexviz.widgets import Debugger

    run = dexviz.simulate(ContractEditFlow(), sample_edits(3), seed=0)
    dbg = Debugger(run.history)
    dbg.jump(kind="MessageConsumed")
    bundle = dbg._repr_mimebundle_()
    print(json.dumps({"keys": sorted(bundle), "html": bundle["text/html"],
                      "holder": dbg.state.holder_of("contractEditToken"),
                      "selected": dbg.highlighted(),
                      "loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)}))
    """
)


def test_the_snapshot_replaces_the_widget_and_names_the_missing_extras():
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["keys"] == ["text/html", "text/plain"] and out["loaded"] == []
    (holder,) = out["holder"]
    assert out["selected"] == [f"exec:{holder}"]
    html = out["html"]
    assert f"reserved by {holder}" in html
    assert "pip install &quot;dexviz[graph]&quot;" in html  # the graph's hint
    assert "pip install &quot;dexviz[plot]&quot;" in html  # the timeline's hint
