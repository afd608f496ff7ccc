"""The report's frames: one per event, from the replay model (``dexviz.replay.frame``).

The page encodes exactly the frames the widget and the snapshot are drawn from; this module
names them for the report's code (``replay_debugger`` is the private Replay it steps).
"""

from __future__ import annotations

from dexviz.replay.frame import PANELS, Frame, frame_at, frames
from dexviz.replay.frame import replay_of as replay_debugger

__all__ = ["PANELS", "Frame", "frame_at", "frames", "replay_debugger"]
