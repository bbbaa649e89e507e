"""The published methodology: docs/methodology.md rendered to HTML once per process."""

from functools import lru_cache

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

SOURCE = settings.BASE_DIR / "docs" / "methodology.md"


@lru_cache(maxsize=1)
def methodology_html() -> SafeString:
    """The methodology as HTML (CommonMark plus tables; raw HTML in the file is escaped)."""
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    # Safe: our own file, rendered with raw HTML disabled (markdown-it escapes it).
    return mark_safe(renderer.render(SOURCE.read_text(encoding="utf-8")))  # noqa: S308
