"""The shared state of one Flow's analysis: the module, the Flow class, and its resolvers."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from dexviz.analysis.definition.resources import ResourceTable
from dexviz.analysis.definition.scope import Reporter
from dexviz.analysis.definition.symbols import ModuleIndex
from dexviz.analysis.definition.targets import StepTargets

__all__ = ["AnalysisContext"]


@dataclass
class AnalysisContext:
    """Everything the readers of waits, decisions and resources need for one Flow."""

    module: ModuleIndex
    flow_class: ast.ClassDef
    report: Reporter
    targets: StepTargets
    resources: ResourceTable

    @classmethod
    def create(cls, module: ModuleIndex, flow_class: ast.ClassDef) -> AnalysisContext:
        """A fresh context with empty diagnostics and no registered Steps yet."""
        report = Reporter(module.path)
        return cls(
            module,
            flow_class,
            report,
            StepTargets(module, flow_class),
            ResourceTable(module, flow_class, report),
        )

    def sdk_call(self, expr: ast.expr) -> str | None:
        """The SDK name of the function ``expr`` calls, or None."""
        return self.module.imports.sdk_call(expr)
