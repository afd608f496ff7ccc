"""``dexviz diff`` and ``dexviz replay-check``: output, exit codes, error paths."""

from __future__ import annotations

import io

import dexviz
from dexviz.cli import main
from dexviz.cli.replay_check import ProgressBar
from dexviz.engine import SQLiteStore
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.compare.variants import CHANGES, variant_source


def _save(tmp_path, name, seed, reviewers=4):
    run = dexviz.simulate(ContractEditFlow(), sample_edits(reviewers), seed=seed)
    return run.history.save(tmp_path / name)


def test_diff_of_two_seeds_exits_1_and_writes_the_view(tmp_path, capsys):
    a, b = _save(tmp_path, "a.jsonl", 1), _save(tmp_path, "b.jsonl", 2)
    code = main(["diff", str(a), str(b), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 1
    assert "first divergence: " in out
    assert (tmp_path / "out" / "diff.html").read_text(encoding="utf-8").count("<svg") == 1
    assert "first divergence" in (tmp_path / "out" / "diff.txt").read_text(encoding="utf-8")


def test_diff_of_a_run_with_itself_exits_0(tmp_path, capsys):
    a = _save(tmp_path, "a.jsonl", 1)
    assert main(["diff", str(a), str(a)]) == 0
    assert "no differences" in capsys.readouterr().out


def test_diff_errors_are_one_line(tmp_path, capsys):
    a = _save(tmp_path, "a.jsonl", 1)
    assert main(["diff", str(a), str(tmp_path / "missing.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["diff", str(a), str(a), "--flow-a", "x"]) == 2
    assert "drop its --flow option" in capsys.readouterr().err
    assert main(["diff", str(a), str(a), "--tolerance", "-1"]) == 2


def _store(tmp_path, count):
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    for number in range(1, count + 1):
        run = dexviz.simulate(ContractEditFlow(), sample_edits(number), seed=number,
                              flow_id=f"edit-{number}")
        store.commit(f"edit-{number}", run.history.events)
    store.close()
    return path


def test_replay_check_of_a_store_reports_each_run_and_exits_1_on_a_divergence(tmp_path, capsys):
    store = _store(tmp_path, 4)
    same = tmp_path / "same.py"
    same.write_text(variant_source(), encoding="utf-8")
    assert main(["replay-check", str(store), f"{same}:ContractEditFlow"]) == 0
    out = capsys.readouterr().out
    assert out.count(": compatible") == 4 and "4 of 4 runs replay compatibly" in out
    changed = tmp_path / "changed.py"
    changed.write_text(variant_source(CHANGES["changed decision"]), encoding="utf-8")
    assert main(["replay-check", str(store), f"{changed}:ContractEditFlow"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["edit-1: compatible", "edit-2: compatible"]
    assert lines[2].startswith("edit-3: DIVERGES #") and "EditContract.execute" in lines[2]
    assert lines[-1] == "2 of 4 runs replay compatibly; 2 diverge or cannot be replayed"


def test_replay_check_of_one_file_and_bad_paths(tmp_path, capsys):
    history = _save(tmp_path, "a.jsonl", 1)
    same = tmp_path / "same.py"
    same.write_text(variant_source(), encoding="utf-8")
    assert main(["replay-check", str(history), f"{same}:ContractEditFlow", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == (
        "1 of 1 runs replay compatibly; 0 diverge or cannot be replayed")
    assert main(["replay-check", str(tmp_path / "nope.db"), f"{same}:ContractEditFlow"]) == 1
    assert "no such file or folder" in capsys.readouterr().err


def test_progress_bar_draws_only_on_a_terminal():
    stream = io.StringIO()
    ProgressBar(stream).update(1, 2)
    assert stream.getvalue() == ""
    bar = ProgressBar(stream, force=True)
    bar.update(1, 2)
    bar.update(2, 2)
    assert stream.getvalue().endswith("] 2/2 runs\n") and "#" * 15 + "." * 15 in stream.getvalue()
