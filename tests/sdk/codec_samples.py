"""Sample values and codecs shared by the codec test modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum, IntEnum
from typing import Generic, TypeVar

from dexviz.sdk.codec import STRING, JsonCodec, WireKind

T = TypeVar("T")
WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


@dataclass(frozen=True)
class Item:
    sku: str
    count: int
    color: Color = Color.RED


@dataclass
class Order:
    order_id: str
    items: list[Item]
    placed_at: datetime
    pair: tuple[int, str] = (0, "")
    tags: dict[str, float] = field(default_factory=dict)
    note: str | None = None


@dataclass
class Tree:
    label: str
    children: list[Tree] = field(default_factory=list)


@dataclass(frozen=True)
class Box(Generic[T]):
    content: T


@dataclass(frozen=True)
class Blob:
    data: bytes
    level: Level


@dataclass(frozen=True)
class Holder:
    items: list[int]


@dataclass
class Unsupported:
    values: set[int]


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and other.cents == self.cents


MONEY = JsonCodec("Money", lambda data: Money(data["cents"]), lambda m: {"cents": m.cents}, Money)
MONEY_TEXT = type(STRING)("Money", WireKind.STRING, str)


@dataclass
class Invoice:
    total: Money
    lines: list[Money]


def order() -> Order:
    return Order("o-1", [Item("a", 2), Item("b", 1, Color.BLUE)], WHEN, (3, "x"), {"k": 1.5})
