"""Fixtures for the Flow Definition Graph analysis tests: write a Flow to a file, analyse it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from dexviz.analysis.definition import FlowDefinitionGraph, analyze_flow
from tests.analysis.definition.helpers import HEADER


@pytest.fixture
def write_flow(tmp_path: Path) -> Callable[..., Path]:
    """Write Flow source (dedented, after the SDK imports unless ``header=False``) to a file."""

    def write(body: str, *, name: str = "flow_under_test.py", header: bool = True) -> Path:
        path = tmp_path / name
        text = textwrap.dedent(body)
        path.write_text((HEADER + text) if header else text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def analyze(write_flow: Callable[..., Path]) -> Callable[..., FlowDefinitionGraph]:
    """Write Flow source to a file and analyse it (``flow=`` picks one of several)."""

    def run(body: str, flow: str | None = None, *, header: bool = True) -> FlowDefinitionGraph:
        return analyze_flow(write_flow(body, header=header), flow)

    return run
