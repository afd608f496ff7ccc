"""Committing a method's result: deciding, waking waiters, heartbeats, ending runs.

A commit applies one attempt's result and appends the follow-up units; it builds on the core.
"""
