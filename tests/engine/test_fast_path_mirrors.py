"""Every block the fast path inlines names the general-path function it mirrors, which runs.

``dexviz/engine/attempt/fast.py`` (with ``fast_async.py``, its coroutine ``execute``, and
``fast_spawn.py``, its new executions and publications) copies the steps of one commit into a
few functions (a call less per step counts there). Each such block says ``inlined`` and names
its original as ``mirrors dexviz.<module>.<name>``: a contributor who changes the original
finds the copy.
This test checks that each inlined block names one, that every name resolves, and that each
named original actually runs when the fast-path test Flows run with the fast path off, so the
byte-for-byte comparison of ``test_fast_path.py`` covers the original as well as the copy.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from dexviz import Engine
from tests.engine.test_fast_path import _flows

ATTEMPT = Path(__file__).resolve().parents[2] / "dexviz" / "engine" / "attempt"
FAST = (ATTEMPT / "fast.py", ATTEMPT / "fast_async.py", ATTEMPT / "fast_spawn.py")
NAME = re.compile(r"dexviz(?:\.\w+)+")


def _blocks() -> list[tuple[str, str]]:
    """Each ``inlined`` comment or docstring line of the fast path with the three lines after it."""
    blocks = []
    for path in FAST:
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks += [
            (f"{path.name}:{number + 1}", " ".join(lines[number : number + 4]))
            for number, line in enumerate(lines)
            if "inlined" in line and number > 20  # past the module docstring
        ]
    return blocks


def _mirrored() -> list[str]:
    names: list[str] = []
    for line, text in _blocks():
        found = NAME.findall(text[text.index("inlined") :])
        assert found, f"{line}: an inlined block names no original (mirrors dexviz....)"
        names += found
    return sorted(set(names))


def _code(dotted: str) -> CodeType:
    """The code object of a dotted function, method or property (its getter or setter)."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            target = target.__dict__[attribute] if isinstance(target, type) else getattr(
                target, attribute
            )
        if isinstance(target, property):
            target = target.fset if target.fset is not None else target.fget
        return target.__code__  # type: ignore[no-any-return]
    raise AssertionError(f"{dotted} does not resolve")


def test_every_inlined_block_names_an_original_that_resolves() -> None:
    names = _mirrored()
    assert len(names) >= 8
    for name in names:
        _code(name)


def test_every_named_original_runs_with_the_fast_path_off() -> None:
    wanted = {_code(name): name for name in _mirrored()}
    seen: set[CodeType] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in wanted:
            seen.add(frame.f_code)

    for flow, input in _flows().values():
        engine = Engine([flow], seed=0)
        engine._rt.fast.enabled = False
        sys.setprofile(profile)
        try:
            try:
                engine.client().start_flow(flow, "flow-1", input)
            except Exception:  # noqa: BLE001, S112 - an undecodable start input is a case
                continue
            engine.run()
        finally:
            sys.setprofile(None)
    missing = sorted(wanted[code] for code in set(wanted) - seen)
    assert not missing, f"never ran with the fast path off: {missing}"
