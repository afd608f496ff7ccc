"""Counted nouns for user-facing text: ``1 attempt``, ``3 attempts``, never ``attempt(s)``.

It lives in the history layer because that is the lowest layer that every layer writing such
text (engine, analysis, viz, explore, compat, cli, report, widgets) may import.
"""

from __future__ import annotations


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``count`` and ``noun`` in the form that count takes: ``1 holding``, ``0 holdings``.

    Args:
        count: How many there are.
        noun: The singular form (it may carry words before the noun: ``more holding``).
        plural_noun: The plural form, for a noun whose plural is not ``noun`` plus ``s``
            (``plural(2, "body", "bodies")``); ``noun + "s"`` when None.
    """
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural_noun if plural_noun is not None else noun + 's'}"
