"""Pages that show third-party text: a Content-Security-Policy on every HTML page,
no inline scripts, and stored links rendered only for http(s) URLs."""

import re

import pytest

from core.escaping import web_url
from tests.support.factories import (
    make_account,
    make_api_key,
    make_founder,
    make_social,
    make_startup,
)

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/(ld\+)?json\")[^>]*>")


@pytest.fixture
def pages(client, db) -> dict[str, str]:
    """Every kind of HTML page the site serves, as (path -> HTML) for a signed-in founder."""
    startup = make_startup(slug="acme", website="https://acme.example")
    found = {}
    for path in (
        "/accounts/signup/",
        "/accounts/login/",
        "/admin/login/",
        "/docs/",
        "/docs/guide/",
        "/docs/methodology/v1",
        "/docs/methodology/v2",
        "/",
        "/startups/",
    ):
        found[path] = client.get(path)
    found[f"/startups/{startup.slug}"] = client.get(f"/startups/{startup.slug}")
    account = make_account()
    make_api_key(account=account)
    client.force_login(account)
    found["/dashboard/"] = client.get("/dashboard/")
    # POST -> 303 -> the page that shows the new key once.
    found["/dashboard/keys/created/"] = client.post(
        "/dashboard/keys/new/", {"name": "csp"}, follow=True
    )
    found["/dashboard/startups/new/"] = client.get("/dashboard/startups/new/")
    return found


def test_every_html_page_has_a_self_only_content_security_policy(pages):
    for path, response in pages.items():
        assert response.status_code == 200, path
        assert response["Content-Type"].startswith("text/html"), path
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy, path
        assert "'unsafe-inline'" not in policy.replace("style-src-attr 'unsafe-inline'", ""), path
        assert "frame-ancestors 'none'" in policy, path


def test_no_page_has_an_inline_script_or_style_element(pages):
    for path, response in pages.items():
        html = response.content.decode()
        assert not INLINE_SCRIPT.findall(html), path
        assert "<style" not in html, path


def test_the_api_answers_carry_no_page_policy(client, db):
    # Not the pages' policy: nothing may load or run from a JSON answer.
    policy = client.get("/api/v1/startups")["Content-Security-Policy"]
    assert policy == "default-src 'none'; frame-ancestors 'none'; sandbox"


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.cookie)",
        " JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/path",
        "/relative",
        "https:///no-host",
    ],
)
def test_links_are_rendered_only_for_http_and_https(client, db, url):
    startup = make_startup(slug="hostile", website=url)
    make_social(startup, platform="x", url=url)
    make_founder(startup, name="Mallory", twitter=url, linkedin=url)
    page = client.get("/startups/hostile").content.decode()
    hrefs = re.findall(r'href="([^"]*)"', page)
    # Site paths, same-page anchors (the skip link) and http(s) URLs only.
    assert all(h.startswith(("/", "#", "http://", "https://")) for h in hrefs), hrefs
    assert not any("script" in h.lower() or h.startswith(("data:", "//")) for h in hrefs), hrefs


def test_good_links_are_still_linked(client, db):
    startup = make_startup(slug="good", website="https://good.example/")
    make_social(startup, platform="x", url="https://x.com/good")
    make_founder(startup, name="Ada", twitter="http://twitter.com/ada")
    page = client.get("/startups/good").content.decode()
    for url in ("https://good.example/", "https://x.com/good", "http://twitter.com/ada"):
        assert f'href="{url}"' in page


def test_web_url_keeps_only_absolute_http_urls():
    assert web_url("https://a.example/x?y=1") == "https://a.example/x?y=1"
    assert web_url("HTTP://A.example") == "HTTP://A.example"
    assert web_url(None) == ""
    assert web_url("https://a.example/\x00") == ""
    assert web_url("mailto:a@example.com") == ""
