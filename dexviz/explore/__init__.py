"""Exploration: prove a property of a small Flow over every interleaving, or find a counterexample.

``explore`` runs the Flow under every schedule (or a sample), ``checks`` holds the built-in
properties, ``Action`` declares client calls to interleave, ``FaultBudget`` the failures to
inject, and the ``ExplorationReport`` says what was proven or shows the shortest violation.

The package is callable too, so ``dexviz.explore(...)`` works whether ``dexviz.explore`` was
reached as the package or as the function.
"""

import sys
import types
from typing import Any

from dexviz.engine.core.choice import FaultBudget
from dexviz.explore import checks
from dexviz.explore.actions import Action
from dexviz.explore.api import STRATEGIES, explore
from dexviz.explore.report import ExplorationReport
from dexviz.explore.search import NondeterminismError
from dexviz.explore.violation import Violation, ViolationRun

__all__ = [
    "STRATEGIES",
    "Action",
    "ExplorationReport",
    "FaultBudget",
    "NondeterminismError",
    "Violation",
    "ViolationRun",
    "checks",
    "explore",
]


class _CallableModule(types.ModuleType):
    """``dexviz.explore`` is this package and also the function: ``dexviz.explore(flow, ...)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> ExplorationReport:
        return explore(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
