"""``from_dex``: a History from a Dex server's recorded run (Dex Web or dexcli JSON, or pages).

The result is a :class:`DexHistory`: a History like any other (every view reads it), which
also says where it came from and what the Dex events did not carry (:attr:`DexHistory.losses`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from os import PathLike
from pathlib import Path
from typing import Any

from dexviz.history.dex_events import UNKNOWN_KIND, convert
from dexviz.history.dex_json import DexDocument, read_dex
from dexviz.history.dex_loss import Loss, Losses
from dexviz.history.dex_runs import Plan
from dexviz.history.dex_values import is_unavailable
from dexviz.history.event import Event
from dexviz.history.history import History
from dexviz.history.jsonl import HistoryFormatError

__all__ = ["UNKNOWN_KIND", "DexHistory", "DexHistoryWarning", "from_dex", "from_dex_document"]


class DexHistoryWarning(UserWarning):
    """A Dex history held events of types dexviz does not know (they are kept as "unknown")."""


class DexHistory(History):
    """A History read from a Dex server's events.

    Attributes:
        source: Where it came from (a file name, or ``<server>: Flow <id> run <id>``).
        losses: What the Dex events do not carry that dexviz's own histories do, one
            :class:`~dexviz.history.dex_loss.Loss` per topic; the views show less there.
    """

    __slots__ = ("source", "losses")

    def __init__(self, events: Iterable[Event], source: str, losses: tuple[Loss, ...]) -> None:
        super().__init__(events)
        self.source = source
        self.losses = losses

    def __repr__(self) -> str:
        return (f"DexHistory(flow_id={self.flow_id!r}, runs={len(self.run_ids)}, "
                f"events={len(self)}, losses={len(self.losses)}, source={self.source!r})")

    def to_html(self, path: str | PathLike[str], *, token_channel: str | None = None) -> Path:
        """Write this run as one self-contained HTML replay file (as ``run.to_html`` does).

        Raises:
            RuntimeError: no HTML writer is installed (dexviz's package metadata is missing).
        """
        from importlib.metadata import entry_points

        # The history layer imports no view: the report writer is found by its entry point.
        for point in entry_points(group="dexviz.writers", name="html"):
            return Path(point.load()(self, path, token_channel=token_channel))
        raise RuntimeError("no 'html' writer in the entry points 'dexviz.writers': dexviz's "
                           "package metadata is missing; install dexviz to write reports")

    def describe_losses(self) -> str:
        """One line per loss, or a line saying nothing is known to be missing."""
        if not self.losses:
            return "Nothing the views need is known to be missing."
        return "\n".join(f"- {loss}" for loss in self.losses)


def from_dex(source: Any, *, flow_id: str | None = None,
             run_id: str | None = None) -> DexHistory:
    """Load a Dex server's history into a History every dexviz view reads.

    Args:
        source: A path to a JSON file, or its parsed value, in any of the shapes a Dex user
            has: a Dex Web history page ``{"events", "nextPageToken", "nextInternalEventId"}``,
            a list of such pages, a list of Dex Web events ``{eventId, eventTime, type,
            payload}``, or dexcli's ``flow history --all`` output (its object or its list of
            ``{type, payload}`` events). Several runs (a continue-as-new chain) load as one
            History whose events name their run.
        flow_id: The Flow id, when the events do not name it (else it must match them).
        run_id: Keep only this run.

    Returns:
        A :class:`DexHistory`; its ``losses`` say what the events did not carry.

    Raises:
        HistoryFormatError: malformed input (not JSON, a field of the wrong type, events out
            of order); the message names the source and the event index. Nothing half-loads.
        ValueError: ``flow_id`` or ``run_id`` does not match the history.
        OSError: the file cannot be read.
    """
    return from_dex_document(read_dex(source), flow_id=flow_id, run_id=run_id)


def from_dex_document(document: DexDocument, *, flow_id: str | None = None,
                      run_id: str | None = None) -> DexHistory:
    """``from_dex`` for events already read (the gRPC client's pages come this way)."""
    losses = Losses()
    try:
        plan = Plan(document, losses)
    except HistoryFormatError as error:
        raise HistoryFormatError(f"{document.source}: {error}") from None
    if flow_id is not None and plan.flow_id is not None and plan.flow_id != flow_id:
        raise ValueError(f"{document.source} holds Flow {plan.flow_id!r}, not {flow_id!r}")
    if run_id is not None:
        known = [r for r, _ in plan.runs]
        if run_id not in known:
            raise ValueError(f"{document.source} has no run {run_id!r} (its runs: "
                             f"{', '.join(known) or 'none'})")
        plan.runs = [(r, events) for r, events in plan.runs if r == run_id]
    _note_document(document, losses)
    try:
        events = convert(plan, losses, flow_id or plan.flow_id or "unknown-flow")
    except HistoryFormatError as error:
        raise HistoryFormatError(f"{document.source}: {error}") from None
    _note_values(events, losses)
    summary = losses.unknown_summary()
    if summary:
        warnings.warn(f"{document.source}: {summary}", DexHistoryWarning, stacklevel=3)
    return DexHistory(events, document.source, losses.freeze())


def _note_document(document: DexDocument, losses: Losses) -> None:
    if not document.complete:
        losses.add("incomplete", "the last page has a nextPageToken: later events were not read")
    for warning in document.warnings:
        losses.add("values", f"dexcli: {warning}")
    losses.add("spec", "a Dex history holds no Flow definition: the Steps, Channels and "
                       "Attributes listed are those its events name (no docstrings or types)")


def _note_values(events: list[Event], losses: Losses) -> None:
    for event in events:
        for key in ("input", "output", "value"):
            if is_unavailable(event.payload.get(key)):
                losses.add("values", f"#{event.seq} {event.kind}: its {key} is stored in Dex's "
                                     "blob store and not in the history")
