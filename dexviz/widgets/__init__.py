"""The notebook debugger: step through a Flow's execution (``Debugger``).

The model (cursor, state, engine driving) and the static snapshot need only the core; the
widget needs ipywidgets (``pip install "dexviz[notebook]"``) and the graphs need Graphviz.
"""

from dexviz.replay.model import CursorState, DebuggerModel
from dexviz.widgets.debugger import GRAPH_KINDS, Debugger, GraphUnavailable

__all__ = ["GRAPH_KINDS", "CursorState", "Debugger", "DebuggerModel", "GraphUnavailable"]
