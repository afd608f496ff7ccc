"""Hostile Flow sources: deep code, undecodable bytes, special files, a Step listed twice.

Deep but valid code is analysed; code too deep for CPython's own parser is one
DefinitionSourceError naming the file; a path that is not a readable regular file (a FIFO,
``/dev/zero``, a directory, a path longer than PATH_MAX...) is one DefinitionSourceError naming
the file — never a hang, a RecursionError or a MemoryError. Nothing is ever executed.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dexviz.analysis.definition import DefinitionSourceError, analyze_flow
from dexviz.analysis.definition import analyzer as analyzer_module
from dexviz.analysis.definition.reading import MAX_SOURCE_BYTES
from tests.analysis.definition.helpers import HEADER

END = "\n        return dead_end()"
"""The last line of most generated Execute bodies."""
FLOW = """
class F(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(A())
"""


def _flow_with_execute(body: str, extra: str = "") -> str:
    """A one-Step Flow whose Execute body (already indented 8 spaces) is ``body``."""
    return (
        HEADER
        + extra
        + "\nclass A(Step[int]):\n"
        + "    def execute(self, context: Context, n: int) -> StepDecision:\n"
        + body
        + "\n"
        + FLOW
    )


def _ternary(depth: int) -> str:
    expr = "dead_end()"
    for i in range(depth):
        expr = f"dead_end() if n == {i} else {expr}"
    return f"        return {expr}"


def _elif(depth: int) -> str:
    branches = "".join(
        f"        elif n == {i}:\n            return go_to(A, n - 1)\n" for i in range(1, depth)
    )
    return "        if n == 0:\n            return dead_end()\n" + branches + END.lstrip("\n")


def _joined(op: str, terms: int, term: str = "n") -> str:
    return f" {op} ".join([term] * terms)


DEEP_VALID: dict[str, str] = {
    "400-deep elif return": _elif(400),
    "400-deep conditional expression return": _ternary(400),
    "1,000-term sum assigned": f"        x = {_joined('+', 1000)}\n        return go_to(A, x)",
    "1,000-term sum as go_to input": f"        return go_to(A, {_joined('+', 1000)})",
    "1,000-term sum in a condition": (
        f"        if {_joined('+', 1000)} > 3:\n            return dead_end()\n"
        "        return go_to(A, n)"
    ),
    "1,000-term product": f"        x = {_joined('*', 1000)}\n        return dead_end()",
    "1,000-term power": f"        x = {_joined('**', 1000)}\n        return dead_end()",
    "1,000-term and": (
        f"        if {_joined('and', 1000)}:\n            return dead_end()\n"
        "        return dead_end()"
    ),
    "1,000-term or": f"        return dead_end() if {_joined('or', 1000)} else go_to(A, n)",
    "1,000-term comparison chain": (
        f"        if {_joined('<', 1000)}:\n            return dead_end()" + END
    ),
    "1,000-term string concatenation": (
        f"        x = {_joined('+', 1000, repr('a'))}\n        return dead_end()"
    ),
    "1,000 unary minus": "        x = " + "-" * 1000 + "n\n        return dead_end()",
    "500 not": "        if " + "not " * 500 + "n:\n            return dead_end()\n"
    "        return dead_end()",
    "1,000-long attribute chain": "        x = context" + ".a" * 1000 + END,
    "1,000-long call chain": "        x = len(n)" + "()" * 999 + END,
    "1,000-long subscript chain": "        x = n" + "[0]" * 1000 + END,
    "150-deep nested lists": "        x = " + "[" * 150 + "]" * 150 + END,
    "150-deep nested calls": "        x = " + "abs(" * 150 + "n" + ")" * 150 + END,
    "1,000 statements": "".join(f"        x{i} = n + {i}\n" for i in range(1000))
    + "        return dead_end()",
    "1,000 returns": "".join(
        f"        if n == {i}:\n            return go_to(A, {i})\n" for i in range(1000)
    )
    + "        return dead_end()",
    "90-deep nested ifs": "".join(
        "    " * (i + 2) + f"if n > {i}:\n" for i in range(90)
    )
    + "    " * 92
    + "return dead_end()\n        return dead_end()",
    "1,000-long lambda chain": "        f = " + "lambda: " * 1000 + "n\n        return dead_end()",
}


@pytest.mark.parametrize("body", list(DEEP_VALID.values()), ids=list(DEEP_VALID))
def test_deep_but_valid_code_is_analysed(tmp_path: Path, body: str) -> None:
    path = tmp_path / "deep.py"
    path.write_text(_flow_with_execute(body), encoding="utf-8")
    graph = analyze_flow(path)
    assert [n.name for n in graph.steps] == ["A"]
    assert "too_deep" not in [d.code for d in graph.diagnostics]


def test_code_deeper_than_the_analysis_limit_is_a_diagnostic_naming_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no extra headroom, a 1,000-term sum is deeper than the analysis can go.
    monkeypatch.setattr(analyzer_module, "ANALYSIS_RECURSION_LIMIT", 0)
    path = tmp_path / "deep.py"
    path.write_text(
        _flow_with_execute(
            f"        if {_joined('+', 1000)} > 3:\n            return dead_end()\n"
            "        return dead_end()"
        ),
        encoding="utf-8",
    )
    graph = analyze_flow(path)
    too_deep = [d for d in graph.diagnostics if d.code == "too_deep"]
    assert [d.severity for d in too_deep] == ["error"]
    line = HEADER.count("\n") + 2
    assert too_deep[0].message.startswith(f"too deep to analyze at {path}:{line}")
    assert too_deep[0].line == line
    assert [n.name for n in graph.steps] == ["A"]


TOO_DEEP_TO_PARSE: dict[str, tuple[str, str]] = {
    "100,000-term sum": (f"        x = {_joined('+', 100_000)}\n        return dead_end()",
                         "too deep to parse"),
    "5,000-long attribute chain": ("        x = n" + ".a" * 5000 + "\n        return dead_end()",
                                   "too deep to parse"),
    "5,000-long call chain": ("        x = n" + "()" * 5000 + "\n        return dead_end()",
                              "too deep to parse"),
    "5,000 not": ("        x = " + "not " * 5000 + "n\n        return dead_end()",
                  "too deep to parse"),
    "3,000-deep elif": (_elif(3000), "too deep to parse"),
    "20,000 unary minus (parser memory)": ("        x = " + "-" * 20_000 + "n" + END,
                                           "parser ran out of memory"),
    "3,000-deep conditional expression": (_ternary(3000), "too deep to parse"),
    "300 nested parentheses": ("        x = " + "(" * 300 + "n" + ")" * 300
                               + "\n        return dead_end()", "too many nested parentheses"),
    "2,000-deep nested lists": ("        x = " + "[" * 2000 + "]" * 2000
                                + "\n        return dead_end()", "too many nested parentheses"),
    "120-deep nested ifs": (
        "".join("    " * (i + 2) + f"if n > {i}:\n" for i in range(120))
        + "    " * 122 + "return dead_end()\n        return dead_end()",
        "too many levels of indentation",
    ),
}


@pytest.mark.parametrize(("body", "reason"), list(TOO_DEEP_TO_PARSE.values()),
                         ids=list(TOO_DEEP_TO_PARSE))
def test_code_too_deep_for_cpythons_parser_is_one_error_naming_the_file(
    tmp_path: Path, body: str, reason: str
) -> None:
    path = tmp_path / "deep.py"
    path.write_text(_flow_with_execute(body), encoding="utf-8")
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    assert str(caught.value).startswith(f"{path}")
    assert reason in str(caught.value)
    assert caught.value.code in ("too_deep", "syntax_error")
    assert "\n" not in str(caught.value)


VALID = _flow_with_execute("        return dead_end()")

UNDECODABLE: dict[str, tuple[bytes, str, int | None]] = {
    "latin-1 bytes without a cookie": (
        VALID.replace("class A", "# caf\u00e9\nclass A").encode("latin-1"),
        "byte 0xe9 is not valid utf-8",
        HEADER.count("\n") + 2,
    ),
    "unknown coding cookie": (
        b"# -*- coding: klingon -*-\n" + VALID.encode(), "unknown encoding", None
    ),
    "unknown coding cookie on line 2": (
        b"#!/usr/bin/env python\n# coding: nope-8\n" + VALID.encode(), "unknown encoding", None
    ),
    "utf-8 cookie, latin-1 bytes": (
        b"# coding: utf-8\n" + VALID.replace("class A", "# \u00e9\nclass A").encode("latin-1"),
        "not valid utf-8",
        None,
    ),
    "ascii cookie, utf-8 bytes": (
        b"# coding: ascii\n" + VALID.replace("class A", "# \u20ac\nclass A").encode(),
        "not valid ascii",
        None,
    ),
    "BOM with a latin-1 cookie": (
        b"\xef\xbb\xbf# coding: latin-1\n" + VALID.encode(), "encoding problem", None
    ),
    "invalid utf-8 on line 1": (
        b"\xff\xfe\x00garbage\n" + VALID.encode(), "encoding declaration", None
    ),
    "truncated utf-8 at the end": (VALID.encode() + "# \u20ac".encode()[:-1], "utf-8", None),
    "lone surrogate bytes": (VALID.encode() + b"# \xed\xa0\x80\n", "utf-8", None),
    "random binary": (bytes(range(256)) * 4, "", None),
}


@pytest.mark.parametrize(("data", "reason", "line"), list(UNDECODABLE.values()),
                         ids=list(UNDECODABLE))
def test_undecodable_source_is_one_error_naming_the_file(
    tmp_path: Path, data: bytes, reason: str, line: int | None
) -> None:
    path = tmp_path / "bad_bytes.py"
    path.write_bytes(data)
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    assert reason in message
    if line is not None:
        assert caught.value.line == line and message.startswith(f"{path}:{line}:")


def test_a_latin_1_cookie_with_latin_1_bytes_is_analysed(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    text = "# -*- coding: latin-1 -*-\n" + VALID.replace("class A", "# caf\u00e9\nclass A")
    path.write_bytes(text.encode("latin-1"))
    assert [n.name for n in analyze_flow(path).steps] == ["A"]


def test_null_bytes_in_the_source_are_one_error(tmp_path: Path) -> None:
    path = tmp_path / "nul.py"
    path.write_bytes(VALID.encode() + b"\x00\n")
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    assert str(caught.value).startswith(str(path))
    assert "null" in str(caught.value)


def _analyze_within(path: Any, seconds: float = 10.0) -> BaseException | None:
    """Analyse ``path`` on a thread; fail the test if it does not finish in time (a hang)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            analyze_flow(path)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"analysing {path!r} did not finish within {seconds} s"
    return outcome[0]


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.py"
    os.mkfifo(path)
    return path


def _socket(tmp_path: Path) -> Path:
    path = tmp_path / "sock.py"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


def _sparse_huge(tmp_path: Path) -> Path:
    path = tmp_path / "huge.py"
    with path.open("wb") as handle:
        handle.truncate(MAX_SOURCE_BYTES + 1)
    return path


def _symlink_loop(tmp_path: Path) -> Path:
    path = tmp_path / "loop.py"
    path.symlink_to(tmp_path / "loop.py")
    return path


def _long_name(tmp_path: Path) -> Path:
    return tmp_path / ("x" * 300 + ".py")


def _long_path(tmp_path: Path) -> Path:
    return tmp_path.joinpath(*(["d" * 200] * 30), "flow.py")


SPECIAL: dict[str, tuple[Callable[[Path], Any], str]] = {
    "/dev/zero": (lambda _: "/dev/zero", "is a character device"),
    "/dev/null": (lambda _: "/dev/null", "is a character device"),
    "/dev/urandom": (lambda _: "/dev/urandom", "is a character device"),
    "a FIFO": (_fifo, "is a FIFO"),
    "a socket": (_socket, "is a socket"),
    "a directory": (lambda tmp: tmp, "is a directory"),
    "a directory named .py": (lambda tmp: (tmp / "dir.py").mkdir() or tmp / "dir.py",
                              "is a directory"),
    "a file over the size limit": (_sparse_huge, "are refused"),
    "a symlink loop": (_symlink_loop, "cannot be opened"),
    "a name longer than NAME_MAX": (_long_name, "too long"),
    "a path longer than PATH_MAX": (_long_path, "too long"),
    "a path with a NUL": (lambda tmp: str(tmp / "a\x00b.py"), "not a usable path"),
}


@pytest.mark.parametrize(("make", "reason"), list(SPECIAL.values()), ids=list(SPECIAL))
def test_a_path_that_is_not_a_regular_file_is_one_error_naming_it(
    tmp_path: Path, make: Callable[[Path], Any], reason: str
) -> None:
    path = make(tmp_path)
    error = _analyze_within(path)
    assert isinstance(error, DefinitionSourceError), repr(error)
    message = str(error)
    assert reason in message and "\n" not in message
    shown = str(path)
    assert message.startswith(shown if len(shown) <= 160 else shown[:80])
    assert len(message) < 400


@pytest.mark.parametrize("make", [
    lambda tmp: tmp / "missing.py",
    lambda tmp: (tmp / "dangling.py").symlink_to(tmp / "nowhere.py") or tmp / "dangling.py",
], ids=["missing file", "dangling symlink"])
def test_a_missing_file_is_file_not_found_naming_it(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    path = make(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"{path.name}: no such Flow source file"):
        analyze_flow(path)


def test_an_empty_file_has_no_flow(tmp_path: Path) -> None:
    path = tmp_path / "empty.py"
    path.write_text("")
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    assert caught.value.code == "flow_not_found"


DUPLICATES = {
    "start Step listed again": (
        "StepList.start_step(A()).other_steps(A())", "A", 1,
    ),
    "other Step listed twice": (
        "StepList.start_step(A()).other_steps(B(), B())", "B", 1,
    ),
    "listed twice in chained other_steps": (
        "StepList.start_step(A()).other_steps(B()).other_steps(B())", "B", 1,
    ),
    "without a start Step": (
        "StepList.without_start_step(A(), B(), A())", "A", 1,
    ),
    "listed three times": (
        "StepList.start_step(A()).other_steps(B(), B(), B())", "B", 2,
    ),
}

TWO_STEPS = """
class A(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(B, n)

class B(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class F(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return {steps}
"""


@pytest.mark.parametrize(("steps", "name", "count"), list(DUPLICATES.values()),
                         ids=list(DUPLICATES))
def test_a_step_listed_twice_is_an_error_diagnostic(
    write_flow: Callable[..., Path], steps: str, name: str, count: int
) -> None:
    path = write_flow(TWO_STEPS.format(steps=steps))
    graph = analyze_flow(path)
    found = [d for d in graph.diagnostics if d.code == "duplicate_step"]
    assert len(found) == count
    assert all(d.severity == "error" and d.path == str(path) for d in found)
    assert found[0].line == HEADER.count("\n") + TWO_STEPS.count("\n")
    assert found[0].message.startswith(f"F.get_steps lists Step {name} twice")


def test_the_same_step_in_two_alternative_step_lists_is_fine(
    write_flow: Callable[..., Path],
) -> None:
    steps = (
        "StepList.start_step(A()).other_steps(B()) if self else "
        "StepList.start_step(A()).other_steps(B())"
    )
    body = TWO_STEPS.format(steps="x").replace(
        "        return x", f"        if self:\n            return {steps.split(' if ')[0]}\n"
        f"        return {steps.split(' else ')[1]}"
    )
    graph = analyze_flow(write_flow(body))
    assert "duplicate_step" not in [d.code for d in graph.diagnostics]
