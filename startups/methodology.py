"""The published methodology: each version's Markdown rendered to HTML once per process.

docs/methodology.md is the current version; every earlier one keeps its own file, unchanged."""

from functools import lru_cache

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

SOURCES = {
    "v1": settings.BASE_DIR / "docs" / "methodology-v1.md",
    "v2": settings.BASE_DIR / "docs" / "methodology.md",
}


@lru_cache(maxsize=len(SOURCES))
def methodology_html(version: str) -> SafeString:
    """Methodology `version` as HTML (CommonMark plus tables; raw HTML in the file is escaped)."""
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    source = SOURCES[version].read_text(encoding="utf-8")
    # Safe: our own file, rendered with raw HTML disabled (markdown-it escapes it).
    return mark_safe(renderer.render(source))  # noqa: S308
