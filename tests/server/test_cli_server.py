"""``dexviz report --server`` and ``dexviz history --server`` against the local stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("grpc", reason="the server extra (grpcio) is not installed")

from dexviz import cli  # noqa: E402
from tests.dex_support import RUN_ID, contract_edit_run  # noqa: E402
from tests.server.fake_dex import FakeDex  # noqa: E402


def _serve(fake: FakeDex) -> None:
    events = contract_edit_run().events
    fake.runs[RUN_ID] = [{"events": events[:7]}, {"events": events[7:]}]
    fake.current = RUN_ID


def test_report_from_a_server_into_a_folder(fake_dex: FakeDex, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _serve(fake_dex)
    out = tmp_path / "reports"
    assert cli.main(["report", "--server", fake_dex.address, "--flow", "contract-7",
                     "--out", str(out)]) == 0
    assert (out / "contract-7.html").is_file()
    assert "59 events" in capsys.readouterr().out
    assert [r["runId"] for r in fake_dex.requests] == [RUN_ID, RUN_ID]


def test_history_from_a_server_with_a_run(fake_dex: FakeDex,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _serve(fake_dex)
    assert cli.main(["history", "--server", fake_dex.address, "--flow", "contract-7",
                     "--run", RUN_ID, "--channel", "contractEditToken"]) == 0
    assert "3 holdings, OK, no two holdings overlap" in capsys.readouterr().out


def test_unknown_flow_exits_1_with_the_servers_words(fake_dex: FakeDex,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _serve(fake_dex)
    assert cli.main(["report", "--server", fake_dex.address, "--flow", "nope"]) == 1
    assert (f"from the Dex server at {fake_dex.address} failed for Flow 'nope': flow nope not "
            "found") in capsys.readouterr().err
