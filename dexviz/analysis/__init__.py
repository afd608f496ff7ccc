"""Pure functions over histories and Flow sources.

The definition graph, executions, intervals, exclusive sections, concurrency, the critical
path, lineage and the state at an event; none of them imports the engine.
"""
