"""Replay every recorded run of a directory of history files or a SQLite store.

Each run gets its own verdict (compatible, diverges, or cannot be replayed); one run that
cannot be read or replayed does not stop the others.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dexviz.compare.replay import Flows, ReplayCheck, ReplayError, check_recorded
from dexviz.compare.run_sources import is_sqlite
from dexviz.engine.engine import as_registry
from dexviz.engine.sqlite.sqlite_runs import CheckedFlows
from dexviz.history import History, HistoryFormatError
from dexviz.history.collector import collector_paused
from dexviz.sdk import Registry

__all__ = ["RunVerdict", "StoreCheck", "replay_check_store"]

Progress = Callable[[int, int, "RunVerdict"], None]
"""Told after each run: how many are done, how many in all, and the run's verdict."""


@dataclass(frozen=True)
class RunVerdict:
    """One stored run's verdict: its name (Flow id or file), and its check or why it has none."""

    name: str
    check: ReplayCheck | None
    error: str | None = None

    @property
    def compatible(self) -> bool:
        """True only when the run was replayed and is compatible."""
        return self.check is not None and self.check.compatible

    def describe(self) -> str:
        """One line for the run: ``name: compatible``, ``name: DIVERGES ...``, or the error."""
        if self.check is None:
            return f"{self.name}: cannot replay: {self.error}"
        line = self.check.describe()
        return line if self.name == self.check.flow_id else f"{self.name}: {line}"


@dataclass(frozen=True)
class StoreCheck:
    """Every run's verdict; ``compatible`` when all of them replay compatibly."""

    source: str
    verdicts: tuple[RunVerdict, ...]

    @property
    def compatible(self) -> bool:
        """True when every run replays compatibly (and there is at least one)."""
        return bool(self.verdicts) and all(v.compatible for v in self.verdicts)

    @property
    def diverging(self) -> tuple[RunVerdict, ...]:
        """The runs that diverge or cannot be replayed."""
        return tuple(v for v in self.verdicts if not v.compatible)

    def __bool__(self) -> bool:
        """True when every run replays compatibly."""
        return self.compatible

    def __repr__(self) -> str:
        return (
            f"StoreCheck({self.source!r}, runs={len(self.verdicts)}, "
            f"diverging={len(self.diverging)})"
        )


def replay_check_store(
    source: str | Path, flows: Flows, *, progress: Progress | None = None
) -> StoreCheck:
    """Replay every run of a directory of history files (``*.jsonl``) or a SQLite store.

    A SQLite store's rows are checked as they are read (:class:`CheckedFlows`), so a damaged
    row raises its StoreError once the check gets there, after ``progress`` was told of the
    runs before it; no StoreCheck is returned then.

    Raises:
        ValueError: ``source`` is neither a directory nor a SQLite store, or holds no run.
        StoreError: The SQLite store cannot be used, or a row of it is damaged.
    """
    path = Path(source)
    registry = as_registry(flows)
    with _opened_runs(path) as runs:
        total = len(runs.names)
        if not total:
            raise ValueError(f"{path} holds no recorded runs")
        verdicts: dict[str, RunVerdict] = {}
        # The collector's own schedule walked each kept verdict up to three times (a third of
        # the check's time); a young collection after each run walks each once and frees its
        # engine.
        with collector_paused():
            for done, (name, load) in enumerate(runs.loads, 1):
                verdict = verdicts[name] = _verdict(name, load, registry)
                gc.collect(0)
                if progress is not None:
                    progress(done, total, verdict)
    return StoreCheck(str(path), tuple(verdicts[name] for name in runs.names))


def _verdict(name: str, load: Callable[[], History], registry: Registry) -> RunVerdict:
    try:
        return RunVerdict(name, check_recorded(load(), registry, None))
    except (ReplayError, HistoryFormatError, OSError, ValueError) as error:
        return RunVerdict(name, None, str(error))


@dataclass(frozen=True)
class _Runs:
    """The runs' names in the order they are reported, and each one's loader as it comes."""

    names: tuple[str, ...]
    loads: Iterable[tuple[str, Callable[[], History]]]


@contextmanager
def _opened_runs(path: Path) -> Iterator[_Runs]:
    """Each run's name and a loader that reads it when called.

    One run is held at a time: a thousand histories held at once would make every collection
    walk all of them. A SQLite store's come from the pass that checks its rows, each Flow's as
    soon as the pass is past it (in the order they complete), so no body is parsed twice.
    """
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        yield _Runs(tuple(file.name for file in files), ((f.name, _loader(f)) for f in files))
        return
    if not is_sqlite(path):
        raise ValueError(f"{path} is neither a directory of history files nor a SQLite store")
    with CheckedFlows(path) as stored:
        yield _Runs(stored.flow_ids, ((flow_id, _read(h)) for flow_id, h in stored))


def _loader(file: Path) -> Callable[[], History]:
    return lambda: History.load(file)


def _read(history: History) -> Callable[[], History]:
    return lambda: history
