"""Through the test client: every list (the HTML leaderboard, the landing page's
preview, the dashboard) says per row whether the figures are verified (and by which
provider), self-reported or demo, and how fresh; list and profile show the same founders; one
money format; demo figures say so wherever they appear; the chart's labels fit."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.template import Context, Template
from django.utils import timezone

from demo.seed import build_demo
from startups.presentation import CHART_WIDTH, revenue_chart
from tests.support.factories import make_account, make_founder, make_startup, make_verification
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db


def rows_of(html: str) -> dict[str, str]:
    """Each table row's HTML by the startup it links."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = {}
    for row in body.split("<tr>")[1:]:
        name = row.split('data-testid="startup-link">', 1)[1].split("<", 1)[0]
        rows[name] = row
    return rows


@pytest.fixture
def mixed(db):
    """One startup of each kind: fresh Stripe, stale Paddle, revoked Stripe key, demo, self."""
    fresh = make_startup("Fresh", slug="fresh", mrr=9000)
    make_verification(fresh, verified_at=timezone.now() - timedelta(minutes=30))
    stale = make_startup("Stale", slug="stale", mrr=8000)
    make_verification(stale, provider="paddle", verified_at=timezone.now() - timedelta(days=2))
    revoked = make_startup("Revoked", slug="revoked", mrr=7000)
    make_verification(revoked, verified_at=timezone.now() - timedelta(minutes=5))
    ProviderConnection.objects.create(
        startup=revoked, provider="stripe", encrypted_key="x", status="key_revoked"
    )
    demo = make_startup("Invented", slug="invented", mrr=6000)
    make_verification(demo, provider="demo", verified_at=timezone.now())
    make_startup("Solo", slug="solo", mrr=50_000)
    return [fresh, stale, revoked, demo]


def test_every_leaderboard_row_has_its_badge_and_status(client, mixed):
    rows = rows_of(client.get("/startups/").content.decode())
    assert 'data-kind="verified"' in rows["Fresh"] and "Verified · Stripe" in rows["Fresh"]
    assert "synced 30" in rows["Fresh"] and "trust-status" not in rows["Fresh"]
    assert "Verified · Paddle" in rows["Stale"] and ">Stale</span>" in rows["Stale"]
    assert "Verified · Stripe" in rows["Revoked"] and ">Key revoked</span>" in rows["Revoked"]
    assert 'data-kind="demo"' in rows["Invented"] and "Demo data" in rows["Invented"]
    assert "Verified" not in rows["Invented"]
    assert 'data-kind="self"' in rows["Solo"] and "Self-reported" in rows["Solo"]
    assert "$50,000" in rows["Solo"]


def test_the_verified_only_filter_keeps_its_badges(client, mixed):
    html = client.get("/startups/?verified=true").content.decode()
    rows = rows_of(html)
    assert set(rows) == {"Fresh", "Stale", "Revoked", "Invented"}
    assert 'name="verified" value="true" checked' in html


def test_the_landing_page_previews_the_top_verified_startups(client, mixed):
    html = client.get("/").content.decode()
    preview = html.split('id="preview-title"', 1)[1].split("</section>", 1)[0]
    rows = rows_of(preview)
    # Ranked by MRR among verified startups only: the self-reported $50,000 is not there.
    assert list(rows) == ["Fresh", "Stale", "Revoked", "Invented"]
    assert "Solo" not in preview and "Verified · Stripe" in rows["Fresh"]
    assert 'href="/startups/?verified=true"' in preview


def test_the_dashboard_shows_dollars_with_separators_and_badges(client, mixed):
    founder = make_account(email="owner@example.com")
    for startup in mixed:
        startup.owner = founder
        startup.save()
    client.force_login(founder)
    dashboard = client.get("/dashboard/").content.decode()
    assert "$9,000" in dashboard and "$9000" not in dashboard
    assert "Verified · Stripe" in dashboard and "Demo data" in dashboard
    assert ">Key revoked</span>" in dashboard
    mine = client.get("/dashboard/startups/").content.decode()
    assert "$8,000" in mine and "Verified · Paddle" in mine and ">Stale</span>" in mine
    detail = client.get("/dashboard/startups/fresh/").content.decode()
    assert 'data-testid="mrr">$9,000<' in detail


@pytest.mark.parametrize(
    "value, shown", [(4200, "$4,200"), (0, "$0"), (1_234_567, "$1,234,567"), (None, "—")]
)
def test_one_money_filter(value, shown):
    assert Template("{% load site %}{{ v|usd }}").render(Context({"v": value})) == shown


def test_list_and_profile_show_the_same_founder(client, api_client):
    # A founder who typed only a name (the dashboard's form) has no founder rows.
    make_startup("Named", slug="named", founder_name="Grace <b>Example</b>")
    listed = api_client.get("/api/v1/startups").json()["data"][0]["founderName"]
    detail = api_client.get("/api/v1/startups/named").json()["data"]["founders"]
    assert listed == "Grace <b>Example</b>"
    assert detail == [{"name": listed, "title": None, "twitter": None, "linkedin": None}]
    html = client.get("/startups/named").content.decode()
    assert "Grace &lt;b&gt;Example&lt;/b&gt;" in html
    # Founder rows win when there are some.
    with_rows = make_startup("Rows", slug="rows", founder_name="Ada Example")
    make_founder(with_rows, "Ada Example", title="CEO")
    founders = api_client.get("/api/v1/startups/rows").json()["data"]["founders"]
    assert [f["name"] for f in founders] == ["Ada Example"]


def test_the_demo_data_names_in_the_list_the_founder_the_profile_lists(db):
    rows = build_demo(200, today=date(2026, 11, 1))
    founders: dict[str, list[str]] = {}
    for slug, founder in rows.founders:
        founders.setdefault(slug, []).append(founder["name"])
    for startup in rows.startups:
        shown = founders.get(startup["slug"], [])
        assert startup["founder_name"] == (shown[0] if shown else None), startup["slug"]


def test_demo_figures_are_labelled_demo_on_the_profile_badge_and_markdown(client, mixed):
    html = client.get("/startups/invented").content.decode()
    assert "Demo data" in html and "invented" in html and "Verified ·" not in html
    assert "demo data" in client.get("/startups/invented/badge.svg").content.decode()
    markdown = client.get("/startups/invented.md").content.decode()
    assert "Revenue source: demo data (invented figures" in markdown


def test_the_chart_labels_are_few_abbreviated_and_inside_the_chart():
    months = [
        {"month": f"{2024 + m // 12}-{m % 12 + 1:02d}", "gross": 1, "refunds": 0, "net": 100 + m}
        for m in range(30)
    ]
    chart = revenue_chart(months)
    labels = [bar for bar in chart.bars if bar.label]
    assert 4 <= len(labels) <= 8
    assert len([bar for bar in labels if not bar.minor]) <= 4  # what a phone shows
    last = chart.bars[-1]
    assert last.label == "Jun \u201926" and last.anchor == "end"
    assert last.label_x <= CHART_WIDTH


def test_a_stale_badge_follows_the_clock(client, db):
    old = make_startup("Old", slug="old", mrr=10)
    make_verification(old, verified_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert ">Stale</span>" in rows_of(client.get("/startups/").content.decode())["Old"]
