"""scripts/engine_layout.py on a small repository: moves, rewrites, a second run, refusals."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _script():
    """The script as a module (it imports its sibling ``engine_layout_wrap``)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module("engine_layout")
    finally:
        sys.path.remove(str(SCRIPTS))


layout = _script()

LAYER_TEST = '''\
ENGINE_LAYERS: dict[str, frozenset[str]] = {
    # The bottom.
    "core": frozenset({"state", "store"}),
    # Commits.
    "commit": frozenset({"decide"}),
    # The top.
    "faces": frozenset({"__init__", "engine"}),
}  # fmt: skip
"""The table."""
'''

FILES = {
    "tests/test_layering.py": LAYER_TEST,
    "dexviz/__init__.py": "",
    "dexviz/engine/__init__.py": '"""Engine."""\n\nfrom dexviz.engine.store import Store\n',
    "dexviz/engine/state.py": '"""State."""\n',
    "dexviz/engine/store.py": '"""Store."""\n\nfrom dexviz.engine import state\n',
    "dexviz/engine/decide.py": (
        '"""Decide, see ``dexviz/engine/state.py``."""\n\n'
        "from dexviz.engine import state, store as kept\n"
    ),
    "dexviz/engine/engine.py": (
        '"""Engine."""\n\n'
        "from dexviz.engine import decide\nfrom dexviz.engine.state import S\n"
    ),
    "tests/test_patch.py": (
        'TARGET = "dexviz.engine.decide.go"\n'
        'PATH = Path("dexviz") / "engine" / "decide.py"\n'
        'NOT_MOVED = "tests/engine/state.py"\n'
    ),
    "docs/page.md": "See `engine/decide.py` and `engine.state` (an Engine attribute here).\n",
    "CONTRIBUTING.md": "Read `engine.state` first.\n",
}


@pytest.fixture
def repo(tmp_path):
    for relative, text in FILES.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for command in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True)
    return tmp_path


def _read(root: Path, relative: str) -> str:
    return (root / relative).read_text(encoding="utf-8")


def test_layers_move_into_sub_packages_and_every_reference_follows(repo):
    layout.apply(repo, layout.plan(repo))
    moved = (repo / "dexviz/engine").rglob("*.py")
    assert sorted(p.relative_to(repo).as_posix() for p in moved) == [
        "dexviz/engine/__init__.py", "dexviz/engine/commit/__init__.py",
        "dexviz/engine/commit/decide.py", "dexviz/engine/core/__init__.py",
        "dexviz/engine/core/state.py", "dexviz/engine/core/store.py", "dexviz/engine/engine.py",
    ]  # fmt: skip
    assert '"""Committing' in _read(repo, "dexviz/engine/commit/__init__.py")
    decide = _read(repo, "dexviz/engine/commit/decide.py")
    assert "``dexviz/engine/core/state.py``" in decide
    assert "from dexviz.engine.core import state\nfrom dexviz.engine.core import store as kept" in (
        decide
    )  # split by name, then sorted by ruff's isort
    engine = _read(repo, "dexviz/engine/engine.py")
    assert "from dexviz.engine.commit import decide" in engine
    assert "from dexviz.engine.core.state import S" in engine
    patch = _read(repo, "tests/test_patch.py")
    assert '"dexviz.engine.commit.decide.go"' in patch
    assert '"engine" / "commit" / "decide.py"' in patch
    assert '"tests/engine/state.py"' in patch
    assert _read(repo, "docs/page.md") == (
        "See `engine/commit/decide.py` and `engine.state` (an Engine attribute here).\n"
    )
    assert _read(repo, "CONTRIBUTING.md") == "Read `engine.core.state` first.\n"
    assert _read(repo, "tests/test_layering.py") == textwrap.dedent('''\
        ENGINE_LAYERS: dict[str, frozenset[str]] = {
            # The top.
            "faces": frozenset({"__init__", "engine"}),
        }  # fmt: skip
        """The table."""
        ''')


def test_a_second_run_changes_nothing(repo):
    layout.apply(repo, layout.plan(repo))
    assert layout.plan(repo).empty


def test_a_module_in_no_layer_stops_the_run_before_anything_moves(repo):
    (repo / "dexviz/engine/stray.py").write_text('"""Stray."""\n', encoding="utf-8")
    with pytest.raises(layout.LayoutError, match="modules in no layer of ENGINE_LAYERS.*stray"):
        layout.plan(repo)


def test_a_relative_import_inside_the_engine_is_refused_with_its_line(repo):
    (repo / "dexviz/engine/state.py").write_text('"""S."""\n\nfrom . import store\n', "utf-8")
    with pytest.raises(layout.LayoutError, match=r"dexviz/engine/state.py:3: relative import"):
        layout.plan(repo)


def test_a_reworded_line_past_the_limit_is_wrapped_into_its_paragraph():
    before = '"""Summary.\n\nSee ' + "x" * 80 + " dexviz.engine.state and\nmore text.\n" + '"""\n'
    after = before.replace("dexviz.engine.state", "dexviz.engine.core.state")
    wrapped, left = layout.rewrap(before, after, markdown=False)
    assert left == []
    lines = wrapped.splitlines()
    assert lines[2:4] == ["See " + "x" * 80, "dexviz.engine.core.state and more text."]
