"""Founder-typed text (names, descriptions, titles, links) escaped for where it lands: one
function per context, used by every answer that is not an autoescaped HTML template (the SVG
badge, the Markdown twin, plain text and e-mail). HTML templates escape through Django and link
only what `web_url` passes."""

import re
from urllib.parse import urlsplit

SAFE_SCHEMES = frozenset({"http", "https"})

# Characters XML 1.0 forbids (a name holding one would make the badge unparseable), and the
# C0/C1 controls and line/paragraph separators that have no place in one line of text.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")

# Markdown: punctuation that starts a link, image, emphasis, code, autolink, raw HTML, entity,
# table cell or strikethrough anywhere in a line, and e-mail autolinks (GFM); backslash-escaped.
_MD_ANYWHERE = re.compile(r"([\\`*_\[\]<>|#!()&~@])")
# ...and what starts a block only at the beginning of a line: a list, quote, heading underline,
# thematic break or an ordered list's "1." / "1)".
_MD_LINE_START = re.compile(r"^([-+=>:.]|\d+(?=[.)]))")


def plain_text(value: object) -> str:
    """One line of plain text (e-mail bodies and subjects, text/plain answers): control
    characters and line breaks become single spaces, so a value cannot add lines or headers."""
    return _CONTROLS.sub(" ", str(value)).strip()


def xml_text(value: object) -> str:
    """Text safe as XML character data *and* inside a quoted attribute (SVG): `& < > " '`
    escaped, characters XML forbids dropped, line breaks as spaces."""
    text = _XML_FORBIDDEN.sub("", plain_text(value))
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def markdown_text(value: object) -> str:
    """Text that stays text in Markdown (CommonMark and GFM): no link, image, emphasis, code,
    raw HTML, entity, autolink, table cell or block marker can be formed from it."""
    text = _MD_ANYWHERE.sub(r"\\\1", plain_text(value))
    match = _MD_LINE_START.match(text)
    if match:
        if match.group(1)[0].isdigit():  # "1." stays a number: escape the dot or parenthesis
            end = match.end()
            return text[:end] + "\\" + text[end:]
        return "\\" + text
    return text


def web_url(value: object) -> str:
    """`value` if it is an absolute http(s) URL with a host, else "" (no javascript:, data:,
    relative or protocol-relative links). Every surface links only what passes."""
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


def markdown_url(value: object) -> str:
    """An http(s) URL as a Markdown autolink (`<https://...>`), or "" when it is not one.
    `<` and `>` cannot end the autolink early: they are percent-encoded."""
    url = web_url(value)
    if not url:
        return ""
    return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
