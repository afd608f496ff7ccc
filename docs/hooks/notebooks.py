"""MkDocs hook: publish the tutorial notebooks, kept in notebooks/, as pages of the site.

The notebooks stay where nbval and JupyterLab expect them; the site renders their saved outputs
through mkdocs-jupyter (nothing is executed while the site builds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]


@event_priority(100)  # before mkdocs-jupyter, which turns the notebooks it finds into pages
def on_files(files: Files, config: Any) -> Files:
    """Add every ``notebooks/*.ipynb`` as the page ``notebooks/<name>.html``."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{path.name}", src_dir=str(ROOT),
                          dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files
