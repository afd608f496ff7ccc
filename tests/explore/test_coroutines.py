"""Describing a suspended handler's locals: each value by its kind, the kind kept by type."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dexviz.explore import coroutines
from dexviz.explore.coroutines import CoroutineOpaque
from dexviz.sdk.step import Step


class _Plain:
    """A value of no special kind: shown as it is."""


class _Calls:
    def __call__(self) -> None:
        """A callable local cannot be described."""


def test_a_local_is_shown_by_its_kind() -> None:
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        plain = _Plain()
        assert coroutines._local(plain) is plain
        assert coroutines._local((1, "a")) == (1, "a")
        assert coroutines._local(ValueError) is ValueError  # a class is a value
        assert coroutines._local(loop) == ("loop",)
        assert coroutines._local(future) == ("future", False, False)
        with pytest.raises(CoroutineOpaque):
            coroutines._local(_Calls())
    finally:
        loop.close()


def test_a_kind_kept_by_type_follows_a_later_abc_registration() -> None:
    class Late:
        """Becomes a Step by registration after its kind was kept."""

    value: Any = Late()
    assert coroutines._local(value) is value
    Step.register(Late)
    assert coroutines._local(value) == ("step", Late.__qualname__)


def test_a_value_claiming_another_class_is_asked_afresh() -> None:
    class Claims:
        """An instance whose ``__class__`` says it is a Step subclass."""

        @property  # type: ignore[misc]
        def __class__(self) -> type:  # noqa: PLW3201 - the claim under test
            return _StepLike

    class _StepLike(Step[Any]):
        def execute(self, context: Any, input: Any) -> None:  # noqa: A002 - Step's signature
            """Never run."""

    coroutines._local(_Plain())  # a kept kind for another type
    assert coroutines._local(Claims()) == ("step", Claims.__qualname__)
