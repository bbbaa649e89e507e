"""Startup icons: a monogram drawn here, never an image fetched from a third party (a logo URL
is founder-typed: hot-linking it would leak visitors' addresses and let anyone swap the image)."""

import hashlib
from xml.sax.saxutils import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Background colours with white text at >= 4.5:1 contrast.
PALETTE = ["#1f4fc9", "#0f766e", "#7c3aed", "#b4235a", "#9a3412", "#166534", "#374151", "#0e7490"]


def initials(name: str) -> str:
    """Up to two letters: the first of the first two words ("Acme Analytics" -> "AA")."""
    words = str(name or "").split()
    # Words starting with a letter first ("Startup 12" -> "S"); digits only when none does.
    lettered = [w for w in words if w[:1].isalpha()] or [w for w in words if w[:1].isalnum()]
    letters = "".join(w[0] for w in lettered[:2]).upper()
    return letters or "?"


def monogram_svg(name: str, slug: str, size: int = 32) -> str:
    """An inline SVG monogram; its colour follows the slug, so a startup keeps its colour."""
    colour = PALETTE[hashlib.sha256(str(slug).encode()).digest()[0] % len(PALETTE)]
    text = escape(initials(name))
    font = 13 if len(initials(name)) > 1 else 15
    return (
        f'<svg class="monogram" width="{size}" height="{size}" viewBox="0 0 32 32" '
        f'aria-hidden="true" focusable="false"><rect width="32" height="32" rx="8" '
        f'fill="{colour}"/><text x="16" y="16" dy=".35em" text-anchor="middle" fill="#fff" '
        f'font-size="{font}" font-weight="700" font-family="system-ui, sans-serif">{text}</text>'
        "</svg>"
    )


@register.simple_tag
def monogram(name: str, slug: str, size: int = 32) -> SafeString:
    return mark_safe(monogram_svg(name, slug, size))  # noqa: S308 (escaped above)
