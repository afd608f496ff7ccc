"""Without grpcio, ``dexviz.connect`` says which extra to install (this test needs no grpcio)."""

from __future__ import annotations

import sys

import pytest

import dexviz
from dexviz.server import ServerExtraMissingError


def test_connect_without_grpcio_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)  # what an absent package looks like
    with pytest.raises(ServerExtraMissingError) as caught:
        dexviz.connect("127.0.0.1:1")
    assert str(caught.value) == ("reading from a Dex server needs grpcio and protobuf: "
                                 "pip install 'dexviz[server]'")
    assert isinstance(caught.value, ImportError)


def test_from_dex_loads_no_grpc_and_no_server_package() -> None:
    import subprocess

    code = ("import sys, dexviz; dexviz.from_dex; "
            "print('grpc' in sys.modules, 'dexviz.server' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.split() == ["False", "False"]
