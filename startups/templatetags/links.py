"""Links from stored, third-party fields (websites, socials, founders' profiles)."""

from urllib.parse import urlsplit

from django import template

register = template.Library()

SAFE_SCHEMES = frozenset({"http", "https"})


def web_url(value: object) -> str:
    """`value` if it is an absolute http(s) URL with a host, else "" (no javascript:, data:,
    relative or protocol-relative links). Templates link only what passes."""
    if not isinstance(value, str):
        return ""
    url = value.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.hostname:
        return ""
    # Control characters and whitespace could make a browser read the URL differently.
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        return ""
    return url


register.filter("web_url", web_url)
