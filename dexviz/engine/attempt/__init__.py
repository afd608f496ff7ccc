"""Running one method attempt: the general path and the fast path beside it.

``invoke`` runs an attempt against its context and hands the result to the commit layer;
``fast`` does the common transitions in one place, each inlined block naming its original.
"""
