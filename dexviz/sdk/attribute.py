"""Attribute and AttributeMap: durable typed values owned by a Flow execution, and their locks."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from dexviz.sdk.channel import _check_instance, _check_name, physical_name

if TYPE_CHECKING:
    from dexviz.sdk.context import Context

T = TypeVar("T")


class IndexType(enum.Enum):
    """Search index types for indexed Attributes."""

    KEYWORD = "keyword"
    FULL_TEXT = "full_text"
    KEYWORD_ARRAY = "keyword_array"
    INT = "int"
    DOUBLE = "double"
    BOOL = "bool"
    DATETIME = "datetime"


@dataclass(frozen=True)
class AttributeIndex:
    """Makes an Attribute searchable under ``index_key`` (defaults to the Attribute name)."""

    type: IndexType
    index_key: str = ""


@dataclass(frozen=True)
class Attribute(Generic[T]):
    """A durable typed value of one Flow execution; writes commit with the method's result."""

    name: str
    value_type: type[T]
    index: AttributeIndex | None = None
    sync_to_attribute_store: bool = False

    def __post_init__(self) -> None:
        _check_name("Attribute", self.name)

    def physical_name(self, instance: str | None = None) -> str:
        """Return the stored name (a singleton Attribute has no instance)."""
        return self.name

    def get(self, context: Context) -> T:
        """Read the value, including this handler's own staged writes (a type default if unset)."""
        return context._get_attribute(self, None)  # type: ignore[no-any-return]

    def set(self, context: Context, value: T) -> None:
        """Stage a write; setting None deletes the Attribute."""
        context._set_attribute(self, None, value)

    def delete(self, context: Context) -> None:
        """Stage a deletion."""
        context._set_attribute(self, None, None)

    def lock(self) -> AttributeLock:
        """Return a lock on this Attribute for StepOptions or ``@rpc(lock_attributes=...)``."""
        return AttributeLock(self)


@dataclass(frozen=True)
class AttributeMap(Generic[T]):
    """A family of Attribute values keyed by runtime instance keys."""

    name: str
    value_type: type[T]
    index: AttributeIndex | None = None
    sync_to_attribute_store: bool = False

    def __post_init__(self) -> None:
        _check_name("AttributeMap", self.name)
        if self.index is not None and not self.index.index_key:
            raise ValueError(f"AttributeMap {self.name!r}: an index needs an explicit index_key")

    def physical_name(self, instance: str | None = None) -> str:
        """Return ``name/<quoted instance>``."""
        if instance is None:
            raise ValueError(f"AttributeMap {self.name!r} needs an instance key")
        _check_instance("AttributeMap", self.name, instance)
        return physical_name(self.name, instance)

    def get(self, context: Context, instance: str) -> T:
        """Read one instance's value (a type default if unset)."""
        self.physical_name(instance)
        return context._get_attribute(self, instance)  # type: ignore[no-any-return]

    def set(self, context: Context, instance: str, value: T) -> None:
        """Stage a write of one instance."""
        self.physical_name(instance)
        context._set_attribute(self, instance, value)

    def delete(self, context: Context, instance: str) -> None:
        """Stage the deletion of one instance."""
        self.physical_name(instance)
        context._set_attribute(self, instance, None)

    def get_all_instance_keys(self, context: Context) -> tuple[str, ...]:
        """Return the instance keys, sorted, including staged writes and deletions."""
        return context._attribute_map_keys(self)

    def get_map_size(self, context: Context) -> int:
        """Return how many instances hold a value."""
        return len(context._attribute_map_keys(self))

    def lock(self, instance: str) -> AttributeLock:
        """Return a lock on one instance."""
        self.physical_name(instance)
        return AttributeLock(self, instance)

    def load(self, instance: str) -> AttributeMapLoad:
        """Select one instance for loading."""
        self.physical_name(instance)
        return AttributeMapLoad(self, instance)


@dataclass(frozen=True)
class AttributeLock:
    """A lock on a singleton Attribute or on one AttributeMap instance."""

    attribute: Attribute[Any] | AttributeMap[Any]
    instance: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.attribute, AttributeMap) and self.instance is None:
            raise ValueError(f"a lock on AttributeMap {self.attribute.name!r} needs an instance")
        if isinstance(self.attribute, Attribute) and self.instance is not None:
            raise ValueError(f"a lock on Attribute {self.attribute.name!r} takes no instance")

    @property
    def physical_name(self) -> str:
        """The locked key."""
        return self.attribute.physical_name(self.instance)


@dataclass(frozen=True)
class AttributeMapLoad:
    """Selects one AttributeMap instance for loading into a method's snapshot."""

    attribute_map: AttributeMap[Any]
    instance: str

    @property
    def physical_name(self) -> str:
        """The selected key."""
        return self.attribute_map.physical_name(self.instance)


def type_default(value_type: Any) -> Any:
    """Return what a handler reads for an unset Attribute: 0, 0.0, False, or None (R65)."""
    if value_type is bool:
        return False
    if value_type is int:
        return 0
    if value_type is float:
        return 0.0
    return None
