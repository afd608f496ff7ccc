"""FlowConfig (Dex's ``dex.flow_config``): per-run configuration, merged field by field."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum

from dexviz.sdk.client_options import WorkerTarget
from dexviz.sdk.options import StepDurability, as_tuple, require_enum


class ActiveStepSearchMode(Enum):
    """Which active Steps are indexed for search.

    Attributes:
        DEFAULT: The engine's default.
        ALL: Every active Step.
        WITH_WAIT_FOR: Only active Steps that define ``wait_for``.
        DISABLED: None.
    """

    DEFAULT = "default"
    ALL = "all"
    WITH_WAIT_FOR = "with_wait_for"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """Per-run configuration; every None field keeps the inherited or default value.

    Attributes:
        active_step_search_mode: Which active Steps are indexed.
        continue_as_new_threshold: History size (events) that triggers continue-as-new.
        continue_as_new_page_size_bytes: History page budget for continue-as-new.
        step_durability: Default durability of Step methods (R111).
        worker_target: Worker endpoint for later handler calls.
        attribute_store_names: Attribute Stores the Attributes are projected to.
        attribute_store_name: Dex 0.2's single-store spelling; sets ``attribute_store_names``.
    """

    active_step_search_mode: ActiveStepSearchMode | None = None
    continue_as_new_threshold: int | None = None
    continue_as_new_page_size_bytes: int | None = None
    step_durability: StepDurability | None = None
    worker_target: WorkerTarget | None = None
    attribute_store_names: tuple[str, ...] | None = None
    attribute_store_name: str | None = None

    def __post_init__(self) -> None:
        """Validate the fields; store names as a tuple."""
        for name in ("continue_as_new_threshold", "continue_as_new_page_size_bytes"):
            number = getattr(self, name)
            if number is not None and (
                isinstance(number, bool) or not isinstance(number, int) or number <= 0
            ):
                raise ValueError(f"FlowConfig.{name} must be a positive int, got {number!r}")
        if self.active_step_search_mode is not None:
            require_enum(
                "FlowConfig",
                "active_step_search_mode",
                self.active_step_search_mode,
                ActiveStepSearchMode,
            )
        if self.step_durability is not None:
            require_enum("FlowConfig", "step_durability", self.step_durability, StepDurability)
        names = self.attribute_store_names
        if names is not None:
            names = as_tuple("FlowConfig", "attribute_store_names", names)
            object.__setattr__(self, "attribute_store_names", names)
        single = self.attribute_store_name
        if single is not None:
            if names is not None and names != (single,):
                raise ValueError(
                    f"FlowConfig: attribute_store_name {single!r} contradicts "
                    f"attribute_store_names {names!r}"
                )
            object.__setattr__(self, "attribute_store_names", (single,))

    def merged(self, other: FlowConfig | None) -> FlowConfig:
        """Return this config with every non-None field of ``other`` laid over it."""
        if other is None:
            return self
        changes = {
            item.name: getattr(other, item.name)
            for item in fields(other)
            if getattr(other, item.name) is not None and item.name != "attribute_store_name"
        }
        if other.attribute_store_names is not None:
            changes["attribute_store_name"] = other.attribute_store_name
        return replace(self, **changes)
