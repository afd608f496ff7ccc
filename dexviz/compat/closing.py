"""The ``with`` / ``async with`` protocol of Dex's Clients and Workers: leaving the block closes.

Dex's ``Client``, ``AsyncClient``, ``Worker`` and ``AsyncWorker`` are all context managers that
return themselves and call ``close()`` on the way out, exception or not; the two mixins here
say it once.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosesOnExit:
    """``with x:`` returns ``x`` and calls ``x.close()`` when the block is left."""

    def close(self) -> None:
        """Release what the object holds (each class says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class ClosesOnAsyncExit:
    """``async with x:`` returns ``x`` and awaits ``x.close()`` when the block is left."""

    async def close(self) -> None:
        """Release what the object holds (each class says what)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
