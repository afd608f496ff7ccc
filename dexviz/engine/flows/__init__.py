"""Whole runs: starts, SubFlows, Flow timeouts, continue-as-new and time travel.

Built on the attempt, commit and core layers; the runtime and the faces sit above.
"""
