"""Rendering: DOT builders, Graphviz output, matplotlib timelines, pandas tables, run outputs.

Heavy packages are imported lazily, through ``dexviz._optional.require``.
"""
