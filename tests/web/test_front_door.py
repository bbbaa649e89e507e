"""Through the test client: the public pages (landing, list, profile, its Markdown and
badge twins, error pages), the dashboard's key flow and account basics, and the operator's
commands. The same pages in real Chromium (phone width, axe): tests/system/test_browser_pages.py."""

import re
import runpy
import subprocess
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client, RequestFactory

from apikeys.models import ApiKey
from core.errors import handler500
from quota.models import MonthlyUsage
from startups.models import Startup
from tests.support.factories import (
    PASSWORD,
    bearer,
    make_account,
    make_api_key,
    make_founder,
    make_social,
    make_startup,
    make_startups,
    make_verification,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = re.compile(r"osk_[0-9A-Za-z]{46}")
pytestmark = pytest.mark.django_db


@pytest.fixture
def verified(db) -> Startup:
    startup = make_startup(
        "Acme Analytics",
        slug="acme-analytics",
        mrr=4200,
        description="Product analytics for small teams",
        category="Analytics",
    )
    make_founder(startup, "Ada Example", title="CEO", twitter="https://x.com/ada")
    make_social(startup, "github", "https://github.com/acme")
    make_verification(
        startup,
        months=[(date(2026, 9, 1), 4000, 0), (date(2026, 10, 1), 4400, 100)],
    )
    return startup


@pytest.fixture
def founder(db):
    return make_account(email="founder@example.com")


@pytest.fixture
def signed_in(client, founder) -> Client:
    client.force_login(founder)
    return client


# --- pages people land on ----------------------------------------------------------------


def test_the_home_page_is_html_with_live_counts_and_every_way_in(client, verified):
    make_startup(mrr=10, on_sale=True)
    make_startup(mrr=None)
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert 'data-testid="count-startups">3<' in html
    assert 'data-testid="count-verified">1<' in html
    assert 'data-testid="count-on-sale">1<' in html
    for link in ("/accounts/signup/", "/startups/", "/docs/", "/docs/guide/", "/llms.txt"):
        assert f'href="{link}"' in html, link
    assert 'href="/docs/guide/#mcp"' in html


def test_the_home_page_sample_answer_is_what_the_api_serves(client, verified, settings):
    settings.SITE_URL = "https://openstartup.example"
    html = client.get("/").content.decode()
    assert "curl -s https://openstartup.example/api/v1/startups/acme-analytics" in html
    served = client.get("/api/v1/startups/acme-analytics").json()
    sample = re.search(r'data-testid="sample-response">(.*?)</code>', html, re.S).group(1)
    assert '"verifiedAt": "2026-11-01T12:30:15.123Z"' in sample.replace("&quot;", '"')
    assert served["data"]["verification"]["verifiedAt"] == "2026-11-01T12:30:15.123Z"


def test_examples_use_the_sites_absolute_url_in_three_languages_and_mcp_configs(client, settings):
    settings.SITE_URL = "https://data.example.org"
    for path in ("/", "/docs/guide/"):
        html = client.get(path).content.decode().replace("&quot;", '"')
        assert 'curl -s "https://data.example.org/api/v1/startups?limit=3' in html, path
        assert "import httpx" in html and '"https://data.example.org/api/v1/startups"' in html
        assert 'await fetch("https://data.example.org/api/v1/startups' in html
        assert html.count('"https://data.example.org/api/mcp"') == 3  # Claude, Cursor, VS Code
        assert "Claude Desktop" in html and "Cursor" in html and "VS Code" in html
    guide = client.get("/docs/guide/").content.decode()
    assert "'/api/v1/startups" not in guide  # no relative URL left to paste


def test_the_swagger_page_links_the_guide_and_warns_that_try_it_out_spends_records(client):
    html = client.get("/docs/").content.decode()
    assert 'href="/docs/guide/"' in html
    assert "Try it out" in html and "spends records" in html


def test_the_list_filters_sorts_and_links_each_row_to_its_profile(client, verified):
    make_startup("Zeta Tools", slug="zeta", mrr=9000, category="Developer Tools", on_sale=True)
    make_startup("Beta Notes", slug="beta", mrr=100, category="Productivity")
    page = client.get("/startups/")
    html = page.content.decode()
    assert html.index("Zeta Tools") < html.index("Acme Analytics") < html.index("Beta Notes")
    assert 'href="/startups/zeta"' in html
    assert client.get("/startups/zeta").status_code == 200

    def names(query: str) -> list[str]:
        html = client.get(f"/startups/?{query}").content.decode()
        return re.findall(r'data-testid="startup-link">([^<]+)<', html)

    assert names("verified=true") == ["Acme Analytics"]
    assert names("onSale=true") == ["Zeta Tools"]
    assert names("category=product") == ["Beta Notes"]
    assert names("q=analytics") == ["Acme Analytics"]
    assert names("sort=name-asc") == ["Acme Analytics", "Beta Notes", "Zeta Tools"]


def test_list_pages_are_plain_links_and_stop_at_the_cap(client, settings):
    settings.PUBLIC_LIST_MAX_PAGES = 2
    make_startups(60)  # 3 pages of 25
    first = client.get("/startups/?onSale=false").content.decode()
    assert 'href="?onSale=false&amp;page=2"' not in first  # onSale=false means all: not kept
    assert 'href="?page=2"' in first and 'href="?page=3"' not in first
    assert "first 2 pages" in first and "there are more" in first
    deep = client.get("/startups/?page=3").content.decode()
    assert "page 2 of 2" in deep  # a page past the cap shows the last allowed page
    assert deep.count('data-testid="startup-link"') == 25


def test_public_pages_spend_no_allowance_and_are_cached(
    client, verified, django_assert_max_num_queries
):
    for path in ("/", "/startups/", "/startups/acme-analytics", "/startups/acme-analytics.md"):
        assert client.get(path).status_code == 200
    assert client.get("/startups/acme-analytics/badge.svg").status_code == 200
    assert not MonthlyUsage.objects.exists()
    # Served whole from the shared cache, keyed by the data token: at most the token
    # read, as the API's cached answers (none on PostgreSQL while the token watch holds it).
    with django_assert_max_num_queries(1):
        cached = client.get("/startups/")
    assert cached.status_code == 200 and "max-age=" in cached["Cache-Control"]


def test_the_profile_shows_provider_last_sync_chart_founders_and_links(client, verified):
    html = client.get("/startups/acme-analytics").content.decode()
    assert "Verified · Stripe" in html
    assert "verified by <strong>Stripe</strong>, last synced 2026-11-01 12:30 UTC" in html
    assert html.count('<rect class="bar"') == 2
    assert "2026-10: $4,300" in html  # net = gross - refunds, in the bar's title
    assert "Ada Example" in html and "https://x.com/ada" in html
    assert 'href="https://github.com/acme"' in html
    assert "<script" not in html.replace('<script src="/static/js/site.js" defer></script>', "")
    assert "style=" not in html and "<style" not in html


def test_a_self_reported_profile_says_so_and_draws_no_chart(client):
    make_startup("Solo", slug="solo", mrr=500)
    html = client.get("/startups/solo").content.decode()
    assert "Self-reported" in html and "no payment provider is connected" in html
    assert "revenue-chart" not in html


def test_the_markdown_twin(client, verified):
    response = client.get("/startups/acme-analytics.md")
    text = response.content.decode()
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert text.startswith("# Acme Analytics\n")
    assert "- MRR: $4,200 (USD)" in text
    assert "verified by stripe, last sync 2026-11-01T12:30:15.123Z" in text
    assert "| 2026-10 | 4400 | 100 | 4300 |" in text
    assert "- Ada Example, CEO <https://x.com/ada>" in text
    make_startup("Solo", slug="solo", mrr=500)
    assert "self-reported by the founder" in client.get("/startups/solo.md").content.decode()
    assert client.get("/startups/nobody.md").status_code == 404


def test_the_badge_shows_verified_mrr_or_self_reported_and_may_be_cached(client, verified):
    response = client.get("/startups/acme-analytics/badge.svg")
    assert response["Content-Type"] == "image/svg+xml"
    assert "public" in response["Cache-Control"] and "max-age=180" in response["Cache-Control"]
    assert "$4,200 MRR verified" in response.content.decode()
    make_startup("Solo", slug="solo", mrr=500)
    solo = client.get("/startups/solo/badge.svg").content.decode()
    assert "self-reported" in solo and "$500" not in solo
    assert client.get("/startups/nobody/badge.svg").status_code == 404


def test_html_404_and_500_pages_have_the_site_navigation_and_api_errors_stay_json(client):
    page = client.get("/startups/nobody")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert "Page not found" in html and 'href="/startups/"' in html and 'href="/docs/"' in html
    api = client.get("/api/v1/nowhere")
    assert api.status_code == 404
    error = api.json()["error"]
    assert (error["code"], error["message"]) == ("not_found", "No route for /api/v1/nowhere")
    crashed = handler500(RequestFactory().get("/startups/"))
    assert crashed.status_code == 500
    assert "Something went wrong" in crashed.content.decode()
    assert 'href="/startups/"' in crashed.content.decode()
    api_crash = handler500(RequestFactory().get("/api/v1/startups"))
    assert api_crash["Content-Type"] == "application/json"


# --- the dashboard behaves ---------------------------------------------------------------


def test_reloading_the_new_key_page_never_creates_or_shows_another_key(signed_in, founder):
    created = signed_in.post("/dashboard/keys/new/", {"name": "ci"})
    assert created.status_code == 303
    shown = signed_in.get("/dashboard/keys/created/")
    raw = KEY.search(shown.content.decode()).group(0)
    again = signed_in.get("/dashboard/keys/created/", follow=True)
    assert raw not in again.content.decode()
    assert "shown only once" in again.content.decode()
    assert ApiKey.objects.filter(account=founder).count() == 1
    assert signed_in.get("/dashboard/keys/created/").status_code == 302


def test_the_raw_key_is_not_kept_in_the_session_in_clear(signed_in):
    signed_in.post("/dashboard/keys/new/")
    session = signed_in.session
    stored = str(dict(session.items()))
    assert "osk_" not in stored
    assert "osk_" not in session.session_key and session.get("apikeys.new_key")


def test_revoking_an_already_revoked_key_says_so_and_changes_nothing(signed_in, founder):
    obj, _ = make_api_key(account=founder)
    signed_in.post(f"/dashboard/keys/{obj.pk}/revoke/", follow=True)
    obj.refresh_from_db()
    first = obj.revoked_at
    again = signed_in.post(f"/dashboard/keys/{obj.pk}/revoke/", follow=True)
    assert "already revoked" in again.content.decode()
    assert "was revoked;" not in again.content.decode()
    obj.refresh_from_db()
    assert obj.revoked_at == first
    page = signed_in.get(f"/dashboard/keys/{obj.pk}/revoke/", follow=True)
    assert "already revoked" in page.content.decode()


def test_error_messages_look_like_errors(signed_in):
    response = signed_in.post("/dashboard/keys/new/", {"name": "x" * 101}, follow=True)
    assert re.search(r'<li class="error" role="alert">The key name is too long', response.text)


def test_dashboard_times_are_labelled_utc(signed_in, founder):
    make_api_key(account=founder)
    html = signed_in.get("/dashboard/").content.decode()
    assert "Created (UTC)" in html and "Last used (UTC)" in html and "00:00 UTC" in html


def test_password_rules_show_before_the_first_failure(client):
    html = client.get("/accounts/signup/").content.decode()
    assert "at least 8 characters" in html
    assert 'aria-describedby="id_password1_helptext"' in html


def test_password_reset_through_the_console_backend(client, founder, settings):
    assert settings.EMAIL_BACKEND  # tests use Django's outbox; runtime default is the console
    response = client.post("/accounts/password/reset/", {"email": "Founder@Example.com"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["founder@example.com"]
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", mail.outbox[0].body)
    form = client.get(link.group(1), follow=True)
    action = form.redirect_chain[-1][0]
    assert "at least 8 characters" in form.content.decode()
    done = client.post(
        action, {"new_password1": "a-new-long-secret-9", "new_password2": "a-new-long-secret-9"}
    )
    assert done["Location"] == "/accounts/password/reset/done/"
    assert Client().login(username="founder@example.com", password="a-new-long-secret-9")
    # The link worked once.
    assert "no longer works" in client.get(link.group(1), follow=True).content.decode()


def test_unknown_addresses_get_the_same_answer_and_no_mail(client, db):
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert mail.outbox == []


def test_password_change(signed_in, founder):
    response = signed_in.post(
        "/accounts/password/change/",
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-secret-7",
            "new_password2": "another-long-secret-7",
        },
    )
    assert response["Location"] == "/accounts/password/change/done/"
    founder.refresh_from_db()
    assert founder.check_password("another-long-secret-7")


def test_deleting_the_account_revokes_its_keys(signed_in, founder, api_client):
    _, raw = make_api_key(account=founder)
    assert api_client.get("/api/v1/startups", **bearer(raw)).status_code == 200
    refused = signed_in.post("/accounts/delete/", {"password": "wrong"})
    assert "not your password" in refused.content.decode()
    assert api_client.get("/api/v1/startups", **bearer(raw)).status_code == 200
    deleted = signed_in.post("/accounts/delete/", {"password": PASSWORD}, follow=True)
    assert "1 active key(s) revoked" in deleted.content.decode()
    assert api_client.get("/api/v1/startups", **bearer(raw)).status_code == 401
    assert not type(founder).objects.filter(pk=founder.pk).exists()
    assert signed_in.get("/dashboard/").status_code == 302  # signed out


# --- an operator's first minutes ---------------------------------------------------------


def test_sync_revenue_with_nothing_connected_says_how_to_connect(db):
    out = StringIO()
    call_command("sync_revenue", "--all", stdout=out)
    assert "No startup has a payment provider connected" in out.getvalue()
    assert "manage.py connect_provider <slug>" in out.getvalue()


def test_seed_demo_reports_progress_on_large_counts(db):
    out = StringIO()
    call_command("seed_demo", "--count", "5000", stdout=out)
    lines = out.getvalue().splitlines()
    assert any("inserting 5000 startups" in line for line in lines)
    assert len(lines) >= 5
    small = StringIO()
    call_command("seed_demo", "--count", "3", stdout=small)
    assert small.getvalue().count("\n") == 1


def test_gunicorn_copies_never_share_a_control_socket():
    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert config["control_socket_disable"] is True


def test_make_run_installs_only_runtime_requirements():
    plan = subprocess.run(
        ["make", "-n", "-B", "run", "PYTHON=python3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-r requirements.txt" in plan
    assert "requirements-dev" not in plan and "npm" not in plan


@pytest.mark.parametrize(
    "query",
    [
        "page=abc&sort=nope&verified=maybe&onSale=2",
        "page=99999999999999999999&q=%00&category=%00",
        "q=" + "x" * 5000,
        "q=%25_%5C&category=%ff%fe",
    ],
)
def test_the_list_page_never_fails_on_odd_parameters(client, query):
    make_startups(3)
    response = client.get(f"/startups/?{query}")
    assert response.status_code == 200


@pytest.mark.parametrize("slug", ["%00", "%ff", "a%20b", "..", "x" * 500, "ü"])
def test_odd_slugs_get_the_html_404(client, db, slug):
    for suffix in ("", ".md", "/badge.svg"):
        response = client.get(f"/startups/{slug}{suffix}")
        assert response.status_code == 404, suffix
        assert response["Content-Type"].startswith("text/html")


def test_make_run_prints_the_pages_to_open_when_gunicorn_is_up():
    logged: list[str] = []

    class Log:
        def info(self, message: str, *args) -> None:
            logged.append(message % args)

    class Server:
        cfg = type("Cfg", (), {"address": [("127.0.0.1", 8123)]})()
        log = Log()

    runpy.run_path(str(ROOT / "gunicorn.conf.py"))["when_ready"](Server())
    assert "http://127.0.0.1:8123/startups/" in logged[0]
    assert "http://127.0.0.1:8123/accounts/signup/" in logged[0]
