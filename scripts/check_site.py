"""Check the docs: every code fence closes, and the built site fetches nothing remote.

The site may load no remote script, style, font or image.

Usage: ``.venv/bin/python scripts/check_site.py [SITE_DIR [DOCS_DIR]]`` (default ``site`` and
``docs``), run by ``make docs`` after ``mkdocs build --strict``. A fence left open turns the
rest of its page into code without any build warning, so it fails here with its page and line.
Plain links to other sites are fine (a reader follows them on purpose); what a page loads by
itself is not. Exits 1 and lists every offending page and URL, or 0.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# What a browser loads on its own: scripts, stylesheets, images, frames, fonts and CSS imports.
REMOTE = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc\s*=\s*[\"']?((?:https?:)?//[^\"' >]+)"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?((?:https?:)?//[^\"' >]+)"
    r"|@import\s+(?:url\()?\s*[\"']?((?:https?:)?//[^\"') ]+)"
    r"|url\(\s*[\"']?((?:https?:)?//[^\"') ]+)",
    re.IGNORECASE,
)
SUFFIXES = (".html", ".css", ".js")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def unclosed_fence(text: str) -> int | None:
    """The 1-based line of the code fence in Markdown ``text`` that never closes, or None.

    As CommonMark reads it, a fence closes only on a line of the same character, at least as
    long, with nothing after it but spaces: a ```` ``` text ```` or ```` ```sh ```` line inside
    the block closes nothing and starts nothing, so the block runs on over the prose after it
    (and may end much later, at some other fence). Such a line counts as not closing its
    block: the block's opening line is returned.
    """
    opened: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if match is None:
            continue
        fence, rest = match.groups()
        if opened is None:
            if not (fence[0] == "`" and "`" in rest):  # a backtick info string is inline code
                opened = (number, fence)
        elif fence[0] == opened[1][0] and len(fence) >= len(opened[1]):
            if rest.strip():
                return opened[0]
            opened = None
    return opened[0] if opened is not None else None


def unclosed_fences(docs: Path) -> list[tuple[str, int]]:
    """``(page, line)`` of every Markdown page under ``docs`` whose code fence never closes."""
    found = []
    for path in sorted(docs.rglob("*.md")):
        line = unclosed_fence(path.read_text(encoding="utf-8"))
        if line is not None:
            found.append((path.relative_to(docs).as_posix(), line))
    return found


def remote_loads(site: Path) -> list[tuple[str, str]]:
    """``(page, url)`` for every remote resource a page of ``site`` would load."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in SUFFIXES or path.name.endswith(".map"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in REMOTE.finditer(text):
            url = next(group for group in match.groups() if group)
            found.append((path.relative_to(site).as_posix(), url))
    return found


def main(argv: list[str] | None = None) -> int:
    """Check the site folder named in ``argv`` (default ``site``)."""
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0] if args else "site")
    docs = Path(args[1] if len(args) > 1 else "docs")
    fences = unclosed_fences(docs) if docs.is_dir() else []
    for page, line in fences:
        print(f"check_site: {docs.name}/{page}:{line}: this code fence never closes",
              file=sys.stderr)
    if fences:
        return 1
    if not (site / "index.html").is_file():
        print(f"check_site: {site}/index.html is missing; run mkdocs build first", file=sys.stderr)
        return 1
    found = remote_loads(site)
    for page, url in found:
        print(f"check_site: {page} loads {url}", file=sys.stderr)
    if found:
        return 1
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"check_site: {pages} pages, nothing loaded from the network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
