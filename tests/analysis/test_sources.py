"""Finding a history's recorded Flow source: import location, history folder, working folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dexviz.analysis.sources import find_recorded_source, module_file
from tests.widgets.helpers import history

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "dexviz" / "examples" / "contract_edit.py"


def test_the_recording_module_is_found_from_any_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lookup = find_recorded_source(history(reviewers=2).flow_spec)
    assert lookup.recorded == "dexviz/examples/contract_edit.py"
    assert lookup.found == EXAMPLE


def test_module_file_finds_a_module_without_importing_it(monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "json.decoder", raising=False)
    found = module_file("json.decoder")
    assert found is not None and found.name == "decoder.py"
    assert module_file("__main__") is None
    assert module_file("no_such_package_anywhere.sub") is None


def test_a_source_beside_the_history_file_is_found(tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "my_flow.py").write_text("# a Flow\n")
    monkeypatch.chdir(REPO)
    spec = {"module": "my_flow_not_importable", "source_file": "my_flow.py"}
    lookup = find_recorded_source(spec, history_dir=tmp_path / "runs")
    assert lookup.found == (tmp_path / "runs" / "my_flow.py").resolve()


@pytest.mark.parametrize("recorded", ["../outside.py", "ABSOLUTE"])
def test_a_file_outside_the_allowed_folders_is_never_opened(tmp_path, monkeypatch, recorded):
    outside = tmp_path / "outside.py"
    outside.write_text("# not to be read\n")
    inside = tmp_path / "work"
    inside.mkdir()
    monkeypatch.chdir(inside)
    spec = {"module": "not_importable_x", "source_file":
            str(outside) if recorded == "ABSOLUTE" else recorded}
    lookup = find_recorded_source(spec)
    assert lookup.found is None
    assert lookup.refused == (str(outside),)
    assert "not opened" in lookup.explain() and "flow_source=" in lookup.explain()


def test_the_message_lists_every_path_tried(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = {"module": "gone_module", "source_file": "flows/gone.py"}
    lookup = find_recorded_source(spec, history_dir=tmp_path / "h")
    text = lookup.explain()
    assert "'flows/gone.py' was not found" in text
    assert str(tmp_path / "h" / "flows" / "gone.py") in text
    assert str(tmp_path / "flows" / "gone.py") in text
    assert "pass flow_source=" in text
    assert "records no source file" in find_recorded_source({}).explain()


class _EditableFinder:
    """A meta-path finder like an editable install's: its package is on no ``sys.path``."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name, self.folder = name, folder

    def find_spec(self, fullname, path=None, target=None):
        import importlib.util

        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.folder / "__init__.py",
            submodule_search_locations=[str(self.folder)])


def test_a_module_of_an_editable_install_is_found_run_from_anywhere(tmp_path, monkeypatch):
    import sys

    package = tmp_path / "elsewhere" / "dxedit_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "flows.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.setattr(sys, "meta_path", [_EditableFinder("dxedit_pkg", package), *sys.meta_path])
    work = tmp_path / "work"
    work.mkdir()
    spec = {"module": "dxedit_pkg.flows", "source_file": "dxedit_pkg/flows.py"}
    found = find_recorded_source(spec, history_dir=work, cwd=work)
    assert found.found == (package / "flows.py").resolve()
    assert "dxedit_pkg" not in sys.modules and "dxedit_pkg.flows" not in sys.modules
