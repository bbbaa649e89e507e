"""Every founder-typed string is escaped for where it lands outside the autoescaped
HTML templates (the SVG badge, the Markdown twin, the badge embed snippet), and every answer a
browser may render that is not a page carries a policy that lets nothing load or run."""

import re
import xml.etree.ElementTree as ET
from datetime import date
from html import unescape
from urllib.parse import unquote

import pytest
from django.db import connection
from markdown_it import MarkdownIt

from core.escaping import markdown_text, markdown_url, plain_text, xml_text
from tests.support.factories import make_founder, make_social, make_startup, make_verification

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE_NAMES = [
    '" onload="document.title=\'pwned\'" x="',
    "' onload='document.title=1' x='",
    "</title><script>document.title='pwned'</script><title>",
    "Tom & Jerry <Ltd> \"quoted\" 'single'",
    "[click me](javascript:alert(1)) **bold** _em_ `code` <b>html</b> &amp; ![i](x)",
    "Line\nbreak\x00 and \x07 bell\x1b",
]
HOSTILE_DESCRIPTIONS = [
    "[x](javascript:alert(document.cookie)) and <javascript:alert(1)> and <a href=x>a</a>",
    "- not a list\n# not a heading\n1. not ordered\n> not a quote\n---\n| a | b |",
    "mail founder@example.com, see [ref]\n\n[ref]: javascript:alert(1)",
    "&lt;script&gt; &#x3C; *a* __b__ ~~c~~ <!-- comment -->",
]
# Exactly the attributes each element of the badge has, whatever the name.
BADGE_ATTRIBUTES = {
    "svg": {"width", "height", "role", "aria-label"},
    "title": set(),
    "rect": [{"width", "height", "fill"}, {"x", "width", "height", "fill"}],
    "g": {"fill", "font-family", "font-size", "text-anchor"},
    "text": {"x", "y"},
}


def storable(text: str) -> str:
    """PostgreSQL's text columns cannot hold NUL (the forms refuse it there): a space, which
    every output shows exactly as it shows a NUL."""
    return text.replace("\x00", " ") if connection.vendor == "postgresql" else text


def hostile_startup(name: str, *, description: str = "", verified: bool = True, **fields):
    startup = make_startup(name, slug="hostile", mrr=4200, description=description, **fields)
    if verified:
        make_verification(startup, months=[(date(2026, 10, 1), 4400, 100)], mrr=4200)
    return startup


def flat(value: str) -> str:
    """What a founder's string becomes on one line (control characters as spaces)."""
    return plain_text(value)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("verified", [True, False])
def test_the_badge_is_well_formed_with_exactly_its_own_attributes(client, db, name, verified):
    name = storable(name)
    hostile_startup(name, verified=verified)
    response = client.get("/startups/hostile/badge.svg")
    assert response.status_code == 200
    root = ET.fromstring(response.content)  # noqa: S314 - our own answer; raises if malformed
    value = "$4,200 MRR verified" if verified else "self-reported"
    label = flat(f"{name}: {value}")
    rects = []
    for element in root.iter():
        assert element.tag.startswith(SVG), element.tag
        tag = element.tag.removeprefix(SVG)
        assert tag in BADGE_ATTRIBUTES, tag
        if tag == "rect":
            rects.append(set(element.attrib))
        else:
            assert set(element.attrib) == BADGE_ATTRIBUTES[tag], (tag, element.attrib)
    assert rects == BADGE_ATTRIBUTES["rect"]
    assert [e.tag.removeprefix(SVG) for e in root] == ["title", "rect", "rect", "g"]
    # The name is kept, as text: the same in the label and the title.
    assert root.get("aria-label") == label
    assert root.find(f"{SVG}title").text == label
    assert [t.text for t in root.iter(f"{SVG}text")] == ["OpenStartup", value]


def markdown_tokens(text: str) -> list:
    """Every token of a Markdown document, inline ones included, as CommonMark with GFM tables
    and strikethrough reads it."""
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = []
    for token in parser.parse(text):
        tokens.append(token)
        tokens.extend(token.children or [])
    return tokens


def inline_text(token) -> str:
    return "".join(child.content for child in token.children if child.type == "text")


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("description", HOSTILE_DESCRIPTIONS)
def test_the_markdown_twin_keeps_founders_text_as_text(client, db, name, description):
    name, description = storable(name), storable(description)
    startup = hostile_startup(
        name, description=description, website="javascript:alert(1)", category="<b>[x](y)</b>"
    )
    make_founder(startup, name=name, title=description, twitter="javascript:alert(1)")
    make_founder(startup, name="Ada", linkedin="https://linkedin.com/in/ada?a=<b>")
    make_social(startup, platform="[x](javascript:alert(1))", url="javascript:alert(1)")
    make_social(startup, platform="github", url="https://github.com/acme")
    response = client.get("/startups/hostile.md")
    assert response.status_code == 200
    text = response.content.decode()
    tokens = markdown_tokens(text)
    kinds = {token.type for token in tokens}
    # No raw HTML, emphasis, images, code, tables or extra headings from founders' text.
    assert not kinds & {"html_inline", "html_block", "image", "code_inline", "em_open"}
    assert not kinds & {"strong_open", "s_open", "blockquote_open", "ordered_list_open", "hr"}
    headings = [t for i, t in enumerate(tokens) if i and tokens[i - 1].type == "heading_open"]
    assert inline_text(headings[0]) == flat(name)
    assert len(headings) == 1 + 3  # the name; founders, links, verified monthly revenue
    links = [t.attrs["href"] for t in tokens if t.type == "link_open"]
    assert links, text
    assert all(re.match(r"https?://", href) for href in links), links
    assert set(links) == {"https://linkedin.com/in/ada?a=%3Cb%3E", "https://github.com/acme"}
    # Every link's text is its own URL (autolinks): no founder wrote a link.
    for index, token in enumerate(tokens):
        if token.type == "link_open":
            assert tokens[index + 1].content == unquote(token.attrs["href"])
    paragraphs = [
        inline_text(t) for i, t in enumerate(tokens) if i and tokens[i - 1].type == "paragraph_open"
    ]
    assert flat(description) in paragraphs
    assert "- Website: javascript:alert(1)" in text.replace("\\", "")


def test_the_badge_embed_snippet_on_the_profile_is_escaped_for_the_founders_page(client, db):
    hostile_startup('Acme" onerror="alert(1)', verified=False)
    page = client.get("/startups/hostile").content.decode()
    snippet = unescape(re.search(r"<pre><code>(.*?)</code></pre>", page, re.S).group(1))
    assert 'alt="Acme&quot; onerror=&quot;alert(1) on OpenStartup"' in snippet
    assert 'onerror="' not in snippet


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/startups/hostile/badge.svg", "image/svg+xml"),
        ("/startups/hostile.md", "text/markdown; charset=utf-8"),
        ("/llms.txt", "text/plain; charset=utf-8"),
        ("/api/v1/startups", "application/json"),
        ("/api/ai/discovery", "application/json"),
        ("/startups/nobody/badge.svg", "text/html; charset=utf-8"),
    ],
)
def test_answers_that_are_not_pages_let_nothing_load_or_run(client, db, path, content_type):
    hostile_startup("<script>", verified=False)
    response = client.get(path)
    assert response["Content-Type"] == content_type
    assert response["X-Content-Type-Options"] == "nosniff"
    policy = response["Content-Security-Policy"]
    if content_type.startswith("text/html"):  # the 404 page: the pages' own policy
        assert "default-src 'self'" in policy
        return
    directives = {part.strip() for part in policy.split(";")}
    assert directives == {"default-src 'none'", "frame-ancestors 'none'", "sandbox"}


def test_the_escaping_rules():
    assert xml_text("a\"b'c<d>e&f") == "a&quot;b&apos;c&lt;d&gt;e&amp;f"
    assert xml_text("a\x00b\nc\ufffe") == "a b c"
    assert plain_text("Subject\r\nBcc: x@example.com") == "Subject Bcc: x@example.com"
    assert markdown_text("[a](javascript:x)") == r"\[a\]\(javascript:x\)"
    assert markdown_text("1. one") == r"1\. one"
    assert markdown_text("- item") == r"\- item"
    assert markdown_url("javascript:alert(1)") == ""
    assert markdown_url("https://a.example/<x>") == "<https://a.example/%3Cx%3E>"


@pytest.mark.parametrize(
    "name",
    [
        'Acme" onload="window.pwned=\'attribute\'" x="',
        "Acme' onload='window.pwned=1' x='",
        "Acme</title><script>window.pwned='element'</script><title>",
    ],
)
def test_a_hostile_badge_opened_in_chromium_runs_nothing(live_server, monkeypatch, name):
    from tests.support.browser import chromium

    hostile_startup(name, verified=False)
    with chromium(monkeypatch) as browser:
        page = browser.new_page()
        try:
            response = page.goto(f"{live_server.url}/startups/hostile/badge.svg")
            assert response.status == 200
            page.wait_for_load_state("load")
            # The document is the badge, its label the whole name, and no handler ran.
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert page.evaluate("document.querySelectorAll('script').length") == 0
            assert page.evaluate("document.documentElement.localName") == "svg"
            label = page.evaluate("document.documentElement.getAttribute('aria-label')")
            assert label == f"{name}: self-reported"
        finally:
            page.close()
