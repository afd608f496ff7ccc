"""The replay model: a cursor over a run and what each view shows at it (no ipywidgets).

``Replay`` steps through a History (or drives a simulation Engine) and answers what is
highlighted, held and drawn at its cursor; ``Frame`` is that answer at one event. The HTML
report (``dexviz.report``) and the notebook widget (``dexviz.widgets``) both derive from it:
``replay ← report ← widgets``.
"""

from dexviz.replay.frame import PANELS, Frame, frames
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.session import GRAPH_KINDS, Replay

__all__ = ["GRAPH_KINDS", "PANELS", "Frame", "GraphUnavailable", "Replay", "frames"]
