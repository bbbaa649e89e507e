"""The mark, favicon and social preview; startup icons are monograms drawn here
(the startup's name escaped for SVG), never images hot-linked from a third party."""

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from startups.templatetags.icons import initials, monogram_svg
from tests.support.factories import make_startup

pytestmark = pytest.mark.django_db


def test_every_page_names_its_mark_favicon_and_social_preview(client):
    make_startup("Acme Analytics", slug="acme", mrr=10, description="Analytics")
    for path in ("/", "/startups/", "/startups/acme", "/docs/guide/", "/docs/"):
        html = client.get(path).content.decode()
        assert 'rel="icon" href="/static/favicon.svg"' in html, path
        assert '<meta property="og:image" content="http://testserver/static/img/og.png">' in html
        assert '<meta name="description" content="' in html, path
        assert 'src="/static/img/mark.svg"' in html, path
    profile = client.get("/startups/acme").content.decode()
    assert '<meta property="og:title" content="Acme Analytics on OpenStartup">' in profile
    assert 'content="Acme Analytics: $10 MRR, self-reported revenue. Analytics"' in profile


def test_the_images_are_served_by_the_site():
    for name in ("favicon.svg", "img/mark.svg", "img/og.png", "img/icon-180.png"):
        assert finders.find(name), name
    png = Path(finders.find("img/og.png")).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20]) == 1200 and int.from_bytes(png[20:24]) == 630


def test_startup_icons_are_monograms_never_hot_linked(client):
    make_startup("Acme Analytics", slug="acme", mrr=10, icon="https://tracker.example.net/i.png")
    for path in ("/", "/startups/", "/startups/acme"):
        html = client.get(path).content.decode()
        assert 'src="https://tracker' not in html and '<img src="http' not in html, path
    listed = client.get("/startups/").content.decode()
    assert '<svg class="monogram"' in listed and ">AA</text>" in listed


@pytest.mark.parametrize(
    "name, letters",
    [
        ("Acme Analytics", "AA"),
        ("zeta", "Z"),
        ("  ", "?"),
        ("<b>x</b> & y", "Y"),
        ("Ünï çode", "ÜÇ"),
    ],
)
def test_initials(name, letters):
    assert initials(name) == letters


def test_a_hostile_name_cannot_break_out_of_the_svg(client):
    svg = monogram_svg('&x <script>alert(1)</script>"', "slug")
    assert "<script" not in svg and "&amp;" not in svg.split("<text")[0]
    make_startup('A&B <svg onload=alert(1)> "Q"', slug="hostile", mrr=1)
    html = client.get("/startups/").content.decode()
    assert "<svg onload" not in html and "&lt;svg onload=alert(1)&gt;" in html
    assert ">AQ</text>" not in html  # the name's initials: "A" of A&B, "<" is not a letter
