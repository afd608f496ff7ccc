"""The durable SQLite store: schema, open-time check, compaction, writer lock, fsync.

It encodes the core's records, and imports only the core.
"""
