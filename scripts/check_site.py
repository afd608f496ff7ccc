"""Check that the built documentation site fetches nothing: no remote script, style, font or image.

Usage: ``.venv/bin/python scripts/check_site.py [SITE_DIR]`` (default ``site``), run by
``make docs`` after ``mkdocs build --strict``. Plain links to other sites are fine (a reader
follows them on purpose); what a page loads by itself is not. Exits 1 and lists every
offending page and URL, or 0.
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
