"""The replay model is imported one way: ``replay ← report ← widgets``, and no package of the
three has an import cycle inside it (imports in functions and TYPE_CHECKING blocks count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_layering import import_sites, module_name

PACKAGE = Path(__file__).resolve().parents[2] / "dexviz"

ORDER = ("replay", "report", "widgets")
"""Lower first: each may import the ones before it, never one after it."""


def _edges(package: str) -> dict[str, set[str]]:
    """Module -> the dexviz modules it imports, for every file of ``dexviz/<package>``."""
    edges: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / package).rglob("*.py")):
        module = module_name(PACKAGE, path)
        edges[module] = {site.target for site in import_sites(PACKAGE, path)
                         if site.target.startswith("dexviz.")}
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle among ``edges``' modules (as a path), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module], _ = 1, stack.append(module)
        for target in sorted(edges.get(module, ())):
            if target not in edges:
                continue
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        state[module], _ = 2, stack.pop()
        return None

    for module in sorted(edges):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


@pytest.mark.parametrize("package", ORDER)
def test_no_import_cycle_inside_the_package(package):
    cycle = _cycle(_edges(package))
    assert cycle is None, " -> ".join(cycle or ())


@pytest.mark.parametrize("lower, higher", [(ORDER[i], later) for i in range(len(ORDER))
                                           for later in ORDER[i + 1:]])
def test_a_lower_package_never_imports_a_higher_one(lower, higher):
    wrong = sorted(f"{module} imports {target}" for module, targets in _edges(lower).items()
                   for target in targets if target.split(".")[1] == higher)
    assert not wrong, wrong


def test_the_cycle_finder_finds_a_cycle_through_a_type_checking_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(edges) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
