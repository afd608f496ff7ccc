"""User outputs are written whole or not at all, and a failed write names its file.

The file-size limit (``RLIMIT_FSIZE``, with SIGXFSZ ignored so ``write`` fails with EFBIG) is
set in a child process just before the write, after the imports and the drawing, so only the
output itself hits it. Each writer must leave no partial or temporary file, keep an existing
file as it was, and raise an error naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dexviz.history.output_files import (
    OutputWriteError,
    output_file,
    write_output_bytes,
    write_output_text,
)

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 4096
"""The child's file-size limit in bytes: every output below is larger."""

_CHILD = """
import json, resource, signal, sys
sys.dont_write_bytecode = True
from pathlib import Path
from tests.analysis.runs import contract_edit_run
history = contract_edit_run(0)
target = Path(sys.argv[1])
{prepare}
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))
try:
    {write}
except OSError as error:
    print(json.dumps({{"type": type(error).__name__, "message": str(error)}}))
else:
    print(json.dumps({{"type": None, "message": "written"}}))
"""

_WRITERS = {
    "history.jsonl": ("", "history.save(target)"),
    "report.html": ("from dexviz.report import write_report", "write_report(history, target)"),
    "graph.dot": ("from dexviz.viz.execution_view import execution_graph\n"
                  "graph = execution_graph(history)", "graph.save(target)"),
    "timeline.svg": ("from dexviz.viz.timeline import save_timeline, timeline\n"
                     "figure = timeline(history, channel='contractEditToken')",
                     "save_timeline(figure, target)"),
    "timeline.png": ("from dexviz.viz.timeline import save_timeline, timeline\n"
                     "figure = timeline(history)", "save_timeline(figure, target)"),
    "snapshot.html": ("from dexviz.widgets import Debugger\ndebugger = Debugger(history)",
                      "debugger.snapshot(target)"),
}


def _write_limited(name: str, folder: Path) -> dict[str, str]:
    prepare, write = _WRITERS[name]
    code = _CHILD.format(prepare=prepare, write=write, limit=LIMIT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(folder / name)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=240,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_WRITERS))
def test_a_write_over_the_file_size_limit_names_the_file_and_keeps_the_old_one(name, tmp_path):
    if name == "timeline.png" or name == "timeline.svg":
        pytest.importorskip("matplotlib")
    target = tmp_path / name
    target.write_text("old\n", encoding="utf-8")
    result = _write_limited(name, tmp_path)
    assert result["type"] == "OutputWriteError", result
    assert result["message"] == f"cannot write {str(target)!r}: File too large"
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.slow
def test_the_cli_names_the_file_it_could_not_write_and_leaves_none(tmp_path):
    out = tmp_path / "demo"
    code = textwrap.dedent(f"""
        import resource, signal, sys
        sys.dont_write_bytecode = True
        import dexviz.cli, dexviz.report, dexviz.viz.timeline
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, resource.RLIM_INFINITY))
        sys.exit(dexviz.cli.main(["demo", "--out", sys.argv[1]]))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=240, check=False)
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    named = re.fullmatch(r"dexviz demo: error: cannot write '(.+)': File too large", line)
    assert named is not None, line
    assert Path(named[1]).parent == out and not Path(named[1]).exists()
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_an_error_halfway_leaves_no_partial_file_and_names_the_target(tmp_path):
    target = tmp_path / "history.jsonl"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(OutputWriteError) as raised:
        with output_file(target) as temporary:
            temporary.write_text("half of it", encoding="utf-8")
            raise OSError(errno.EFBIG, "File too large")
    assert str(raised.value) == f"cannot write {str(target)!r}: File too large"
    assert raised.value.errno == errno.EFBIG and raised.value.filename == str(target)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["history.jsonl"]


def test_a_failing_write_call_is_reported_with_the_file(tmp_path, monkeypatch):
    def too_large(self, data):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(Path, "write_bytes", too_large)
    with pytest.raises(OutputWriteError, match=r"cannot write '.*graph\.png': File too large"):
        write_output_bytes(tmp_path / "graph.png", b"\x89PNG")
    assert not list(tmp_path.iterdir())


def test_any_other_error_propagates_unchanged_and_leaves_nothing(tmp_path):
    with pytest.raises(KeyError):
        with output_file(tmp_path / "report.html"):
            raise KeyError("boom")
    assert not list(tmp_path.iterdir())


def test_a_missing_folder_is_named_too(tmp_path):
    target = tmp_path / "no-such-folder" / "report.html"
    with pytest.raises(OutputWriteError, match=r"cannot write '.*report\.html': No such file"):
        write_output_text(target, "<html></html>")


def test_a_written_file_has_the_permissions_a_plain_write_gives(tmp_path):
    old = os.umask(0o022)
    try:
        written = write_output_text(tmp_path / "history.jsonl", "{}\n", newline="\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    assert written.read_bytes() == b"{}\n"


def test_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_output_text(link, "new\n")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new\n"
    assert json.dumps(sorted(p.name for p in tmp_path.iterdir())) == '["link.txt", "real.txt"]'
