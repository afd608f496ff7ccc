"""Render DOT text with Graphviz, and the display/save behaviour every dexviz graph shares.

The ``graphviz`` package is imported lazily (``pip install "dexviz[graph]"``) and runs the
``dot`` program; building DOT never needs either. A missing ``dot`` binary raises
:class:`GraphvizNotInstalledError` from :func:`render` and ``save()``, while
``_repr_mimebundle_`` falls back to the DOT text plus a one-line install hint, so a notebook
never shows a traceback for it.
"""

from __future__ import annotations

import base64
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from dexviz._optional import require
from dexviz.history.output_files import write_output_bytes, write_output_text

__all__ = [
    "BINARY_FORMATS",
    "INSTALL_HINT",
    "GraphView",
    "GraphvizNotInstalledError",
    "GraphvizRenderError",
    "fit_svg",
    "render",
]

BINARY_FORMATS: tuple[str, ...] = ("svg", "png", "pdf")
"""The formats :func:`render` produces with Graphviz."""

INSTALL_HINT = (
    "Graphviz's `dot` program is not installed; install it with `apt install graphviz`, "
    "`brew install graphviz` or `conda install -c conda-forge graphviz` "
    "(.to_dot() works without it)."
)
"""The one-line hint shown when the ``dot`` binary is missing."""

_SVG = "image/svg+xml"
_HTML = "text/html"
_PROLOG = re.compile(r"\A(?:\s*<\?xml[^>]*>|\s*<!DOCTYPE[^>]*>|\s*<!--.*?-->)*\s*", re.S)
_PNG = "image/png"
_TEXT = "text/plain"


class GraphvizNotInstalledError(RuntimeError):
    """The Graphviz ``dot`` program is not on PATH; the message says how to install it."""

    def __init__(self, detail: str = "") -> None:
        suffix = f" ({detail})" if detail else ""
        super().__init__(INSTALL_HINT + suffix)


class GraphvizRenderError(RuntimeError):
    """``dot`` ran but rejected the input; the message carries its stderr."""


def render(dot_text: str, fmt: str) -> bytes:
    """Lay out ``dot_text`` with Graphviz ``dot`` and return the ``fmt`` bytes.

    Args:
        dot_text: A complete DOT graph.
        fmt: One of :data:`BINARY_FORMATS` (``svg``, ``png``, ``pdf``).

    Raises:
        ValueError: ``fmt`` is not supported.
        MissingExtraError: The ``graphviz`` Python package is not installed.
        GraphvizNotInstalledError: The ``dot`` program is not on PATH.
        GraphvizRenderError: ``dot`` failed on the input.
    """
    if fmt not in BINARY_FORMATS:
        raise ValueError(f"cannot render {fmt!r}; choose one of {list(BINARY_FORMATS)}")
    graphviz = require("graphviz", "graph")
    try:
        data = graphviz.pipe("dot", fmt, dot_text.encode("utf-8"), quiet=True)
    except graphviz.ExecutableNotFound as error:
        raise GraphvizNotInstalledError(str(error)) from None
    except graphviz.CalledProcessError as error:
        stderr = error.stderr.decode("utf-8", "replace") if error.stderr else ""
        raise GraphvizRenderError(f"dot failed ({error.returncode}): {stderr.strip()}") from None
    return bytes(data)


_SVG_TAG = re.compile(r"<svg\b[^>]*>")
FIT_STYLE = "max-width:100%;height:auto"
"""The inline style that lets an SVG shrink to its container, keeping its aspect ratio."""


def fit_svg(svg: str) -> str:
    """``svg`` scaled down to the output's width when wider (its viewBox keeps the shape).

    Only the notebook display uses it: a saved file keeps its natural size.
    """
    match = _SVG_TAG.search(svg)
    if match is None:
        return svg
    tag = match.group(0)
    if " style=\"" in tag:
        fitted = tag.replace(' style="', f' style="{FIT_STYLE};', 1)
    else:
        fitted = tag[:4] + f' style="{FIT_STYLE}"' + tag[4:]
    return svg[: match.start()] + fitted + svg[match.end():]


class GraphView(ABC):
    """Base of every renderable dexviz graph: DOT text, files, and notebook display.

    Subclasses implement :meth:`to_dot` and may add text formats with :meth:`_text_formats`.
    """

    @abstractmethod
    def to_dot(self) -> str:
        """The graph as deterministic DOT text (no Graphviz needed)."""

    def _text_formats(self) -> Mapping[str, Callable[[], str]]:
        """File suffixes written as text, and the method producing each."""
        return {".dot": self.to_dot, ".gv": self.to_dot}

    def render(self, fmt: str = "svg") -> bytes:
        """The rendered graph in ``fmt`` (``svg``, ``png`` or ``pdf``); see :func:`render`."""
        return render(self.to_dot(), fmt)

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the graph to ``path``, choosing the format from its suffix; return the path.

        Text suffixes come from :meth:`_text_formats` (``.dot`` and ``.gv`` always); ``.svg``,
        ``.png`` and ``.pdf`` are rendered with Graphviz.

        Raises:
            ValueError: The suffix is not supported (the message lists the ones that are).
            GraphvizNotInstalledError: A rendered format was asked and ``dot`` is missing.
            OutputWriteError: The file could not be written (written whole or not at all).
        """
        target = Path(path)
        suffix = target.suffix.lower()
        writers = self._text_formats()
        if suffix in writers:
            write_output_text(target, writers[suffix]())
        elif suffix.lstrip(".") in BINARY_FORMATS:
            write_output_bytes(target, self.render(suffix.lstrip(".")))
        else:
            known = sorted([*writers, *(f".{fmt}" for fmt in BINARY_FORMATS)])
            raise ValueError(
                f"cannot save {target.name!r}: unknown suffix {suffix or '(none)'!r}; "
                f"use one of {', '.join(known)}"
            )
        return target

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Notebook display: SVG (PNG on request) plus text; DOT and a hint without Graphviz.

        The SVG shrinks to the output's width (see :func:`fit_svg`); ``save`` and ``render``
        keep the natural size. JupyterLab draws ``image/svg+xml`` as an ``<img>`` at natural
        size, so the same SVG also goes inline in ``text/html``, which it prefers.
        """
        wanted = {_SVG, _HTML, _TEXT} if include is None else set(include)
        wanted -= set(exclude or ())
        bundle: dict[str, Any] = {}
        try:
            if _SVG in wanted or _HTML in wanted:
                svg = fit_svg(self.render("svg").decode("utf-8"))
                if _SVG in wanted:
                    bundle[_SVG] = svg
                if _HTML in wanted:
                    bundle[_HTML] = f'<div class="dexviz-graph">{_PROLOG.sub("", svg)}</div>'
            if _PNG in wanted:
                bundle[_PNG] = base64.b64encode(self.render("png")).decode("ascii")
        except (GraphvizNotInstalledError, ImportError) as error:
            hint = INSTALL_HINT if isinstance(error, GraphvizNotInstalledError) else str(error)
            return {_TEXT: f"{self.to_dot()}\n{hint}"}
        if _TEXT in wanted or not bundle:
            bundle[_TEXT] = repr(self)
        return bundle
