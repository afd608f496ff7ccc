"""Re-wrap the prose lines that ``engine_layout.py`` made longer than the line limit.

A longer module path can push a docstring, comment or Markdown line past 100 characters. The
words past the limit move to the start of the next line of the same paragraph (or onto a new
line with the same indentation when the paragraph ends there), and so on down the paragraph.
Only lines the rename changed are wrapped; a code line (or a docstring's summary line) that is
too long is reported, never rewritten.
"""

from __future__ import annotations

import io
import re
import tokenize

LIMIT = 100
_NEW_ITEM = re.compile(r"\s*(?:[-*+] |\d+\. |#|\||>|```|<!--|\.\. |[A-Z]\w*:$|:\w+)")
"""A line that starts a new paragraph element (list item, heading, table, directive, ...)."""


def _python_prose(text: str) -> dict[int, str]:
    """Line index -> the prefix of a prose line (docstring body line or comment-only line)."""
    prose: dict[int, str] = {}
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and token.start[0] != token.end[0]:
            for number in range(token.start[0] + 1, token.end[0] + 1):
                line = lines[number - 1]
                prose[number - 1] = line[: len(line) - len(line.lstrip())]
        elif token.type == tokenize.COMMENT and not lines[token.start[0] - 1][
            : token.start[1]
        ].strip():
            body = token.string[1:]
            prose[token.start[0] - 1] = lines[token.start[0] - 1][: token.start[1]] + "#" + (
                body[: len(body) - len(body.lstrip())]
            )
    return prose


def _markdown_prose(text: str) -> dict[int, str]:
    """Line index -> the indentation of a Markdown prose line (outside fences and tables)."""
    prose: dict[int, str] = {}
    fenced = generated = False
    for index, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        generated = (generated or "modules:start" in line) and "modules:end" not in line
        if fenced or generated or not line.strip() or line.lstrip().startswith(("|", "#", "<")):
            continue
        item = re.match(r"(\s*)((?:[-*+]|\d+\.) )", line)
        prose[index] = item.group(1) + " " * len(item.group(2)) if item else (
            line[: len(line) - len(line.lstrip())]
        )
    return prose


def _split(line: str, prefix: str) -> tuple[str, str] | None:
    """The line cut at its last space within the limit, and the words past it."""
    cut = line.rfind(" ", len(prefix) + 1, LIMIT + 1)
    if cut <= len(prefix):
        return None
    return line[:cut].rstrip(), line[cut + 1 :].strip()


def _continues(lines: list[str], index: int, prefix: str, prose: dict[int, str]) -> bool:
    """Whether the line at ``index`` carries on the paragraph of a line with ``prefix``."""
    if index >= len(lines) or index not in prose or prose[index] != prefix:
        return False
    body = lines[index][len(prefix) :]
    return bool(body.strip()) and body.strip() != '"""' and not _NEW_ITEM.match(body)


def rewrap(original: str, text: str, markdown: bool) -> tuple[str, list[int]]:
    """``text`` with its new over-long prose lines wrapped, and the lines it could not wrap."""
    before = set(original.splitlines())
    lines = text.splitlines()
    prose = _markdown_prose(text) if markdown else _python_prose(text)
    left: list[int] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if len(line) <= LIMIT or line in before:
            index += 1
            continue
        cut = _split(line, prose[index]) if index in prose else None
        if cut is None:
            left.append(index + 1)
            index += 1
            continue
        lines[index], overflow = cut
        prefix = prose[index]
        if _continues(lines, index + 1, prefix, prose):
            lines[index + 1] = f"{prefix}{overflow} {lines[index + 1][len(prefix):].lstrip()}"
        else:
            lines.insert(index + 1, f"{prefix}{overflow}")
            prose = {i + (i > index): p for i, p in prose.items()}
            prose[index + 1] = prefix
        before.discard(lines[index + 1])
        index += 1
    ending = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + ending, left
