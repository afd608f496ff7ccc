"""The engine's core: state, unit records, clock, recorder, the services below all.

The bottom layer: nothing here imports another layer of the engine. The few calls upward (a run
closed, a Wait starts SubFlows) go through the interfaces of :mod:`dexviz.engine.core.ports`,
installed once by the runtime.
"""
