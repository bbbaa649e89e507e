"""RevenueCat API v2: golden cases built from the API v2 reference's shapes (a
project list, the `overview_metrics` object, the Charts API's `chart_data`), served by the local
fake. Time is fixed at NOW (2026-11-15 12:00 UTC); every figure is worked out in a comment.
"""

import io
import json
import sys
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from startups.models import Startup
from tests.support.connectors import (
    Connector,
    assert_refused_answer,
    assert_revoked_key_keeps_the_last_figures,
    sync_through_a_429,
)
from tests.support.provider_surfaces import assert_verified_everywhere, dashboard_connect
from tests.support.verification_fakes import (
    NOW,
    revenuecat_chart,
    revenuecat_metric,
    revenuecat_routes,
    rows,
)
from verification.connections import ConnectionRefused, provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db

KEY = "sk_live_revenuecat_v2_read_only_0001"


def day(month: int, number: int) -> datetime:
    return datetime(2026, month, number, tzinfo=UTC)


def overview(mrr: float = 1000.00, active_subscriptions: int = 120, **drop) -> dict:
    metrics = [
        revenuecat_metric("active_trials", 34),
        revenuecat_metric("active_subscriptions", active_subscriptions),
        revenuecat_metric("mrr", mrr, "$"),
        revenuecat_metric("revenue", 1200.00, "$", "P28D"),
        revenuecat_metric("new_customers", 50, "#", "P28D"),
        revenuecat_metric("active_users", 900, "#", "P28D"),
    ]
    return {
        "object": "overview_metrics",
        "metrics": [m for m in metrics if m["id"] not in drop],
        "currency": "USD",
    }


def golden_routes(projects=(("proj1ab2c3d4",),)) -> dict:
    return revenuecat_routes(
        projects=[list(page) for page in projects],
        overview=overview(),
        monthly=revenuecat_chart(
            [(day(8, 1), 0, 0), (day(9, 1), 850.50, 30), (day(10, 1), 1100.25, 40),
             (day(11, 1), 600.00, 20)],
            resolution="month",
        ),
        daily=revenuecat_chart(
            [(day(10, 20), 100.00, 4), (day(11, 1), 50.50, 2), (day(11, 14), 20.00, 1)],
            resolution="day",
        ),
    )  # fmt: skip


# Worked by hand:
# MRR: RevenueCat's overview says $1,000.00, amortised to 28 days; on our calendar month (365/12
# days) that is 1000 x 365 / (12 x 28) = 1000 x 1.086310 = 1086.31 -> 1086; ARR 1086 x 12 = 13032.
# Customers: active_subscriptions (paid, trials left out) = 120.
# Months (the revenue chart's Revenue measure; the Transactions measure is not money): August $0
# (before the first month with revenue: left out), September 850.50 -> 851, October 1100.25 ->
# 1100, November 600.00 -> 600; refunds 0 (RevenueCat's revenue is already net of refunds).
# Total 851 + 1100 + 600 = 2551. Last 30 days (daily chart, Oct 17 - Nov 15): 100.00 + 50.50 +
# 20.00 = 170.50 -> 171.
GOLDEN = {"mrr": 1086, "arr": 13032, "total": 2551, "last_30_days": 171, "customers": 120}


REVENUECAT = Connector(
    provider="revenuecat",
    token=KEY,
    credential=KEY,
    golden_routes=golden_routes,
    golden_mrr=GOLDEN["mrr"],
    slug="cat",
)
sync = REVENUECAT.sync


def test_revenuecat_golden_case(fake_providers):
    connection = sync(fake_providers, golden_routes())
    assert connection.status == "ok", connection.last_error
    verification = connection.startup.verification
    assert (verification.mrr, verification.arr) == (GOLDEN["mrr"], GOLDEN["arr"])
    assert rows(connection.startup) == [
        ("2026-09", 851, 0, 851),
        ("2026-10", 1100, 0, 1100),
        ("2026-11", 600, 0, 600),
    ]
    assert (verification.total_revenue, verification.last_30_days) == (2551, 171)
    assert verification.customers == 120
    assert (
        fake_providers.calls(
            "/v2/projects/proj1ab2c3d4/charts/revenue", resolution="day", start_date="2026-10-17"
        )
        == 1
    )
    assert fake_providers.calls("/v2/projects/proj1ab2c3d4/metrics/overview", currency="USD") >= 1


def test_revenuecat_json_credential_names_the_project(fake_providers):
    # The key sees two projects over two pages; the JSON names the startup's, so the sync never
    # needs the list. Without a project the same key is refused at connect, saying why.
    routes = golden_routes(projects=(("proj_other",), ("proj1ab2c3d4",)))
    credential = json.dumps({"api_key": KEY, "project_id": "proj1ab2c3d4"})
    connection = sync(fake_providers, routes, credential=credential)
    assert connection.status == "ok", connection.last_error
    assert connection.startup.verification.mrr == GOLDEN["mrr"]
    with pytest.raises(ConnectionRefused, match="sees 2 projects"):
        sync(fake_providers, routes, slug="two")
    assert fake_providers.calls("/v2/projects") == 2  # both pages read before refusing


def test_revenuecat_429_is_retried(fake_providers):
    routes = golden_routes()
    path = "/v2/projects/proj1ab2c3d4/charts/revenue"
    sync_through_a_429(REVENUECAT, fake_providers, routes, path, retry_after="1")
    assert fake_providers.calls(path, resolution="month") == 2


def test_revenuecat_revoked_key_keeps_the_last_figures(fake_providers):
    assert_revoked_key_keeps_the_last_figures(REVENUECAT, fake_providers)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"overview": overview(mrr=None)}, "no `mrr` value"),
        ({"overview": {**overview(), "currency": None}}, "without `currency`"),
        ({"overview": overview(mrr=-5)}, "negative"),
        ({"monthly": {"object": "chart_data", "yaxis_currency": "USD"}}, "`values` list"),
        ({"daily": {"yaxis_currency": "USD", "values": [{"value": 1}]}}, "without `cohort`"),
    ],
)
def test_revenuecat_malformed_answers_name_the_field(fake_providers, change, words):
    routes = golden_routes()
    base = "/v2/projects/proj1ab2c3d4"
    if "overview" in change:
        routes[f"{base}/metrics/overview"] = lambda q: (200, {}, change["overview"])
    else:
        good = routes[f"{base}/charts/revenue"]
        wanted = "month" if "monthly" in change else "day"
        bad = change.get("monthly") or change.get("daily")
        routes[f"{base}/charts/revenue"] = lambda q: (
            (200, {}, bad) if q.get("resolution") == [wanted] else good(q)
        )
    if "overview" in change:
        # The connect-time probe reads the overview too; connect with the good one first.
        connection = sync(fake_providers, golden_routes())
        fake_providers.account(KEY, routes)
        connection = revenue_sync(connection=connection, now=NOW)
        assert connection.startup.verification.mrr == GOLDEN["mrr"]  # kept
    else:
        connection = sync(fake_providers, routes)
    assert_refused_answer(connection, words)


@pytest.mark.parametrize(
    ("credential", "words"),
    [
        ("appl_public_sdk_key", "public app key"),
        ("goog_public_sdk_key", "public app key"),
        ("test_store_key", "public app key"),
        ("rc_something", "starts with sk_"),
        ('{"api_key": 5}', '"api_key"'),
        ('{"api_key": "sk_x", "project_id": 7}', "project_id"),
        ("{not json", "one line of JSON"),
    ],
)
def test_revenuecat_credentials_that_cannot_work_are_refused(credential, words):
    startup = Startup.objects.create(name="X", slug="x")
    with pytest.raises(ConnectionRefused, match=words):
        provider_connection_connect(startup=startup, provider="revenuecat", raw_key=credential)
    assert not ProviderConnection.objects.exists()


def test_connect_provider_takes_the_revenuecat_json_line_on_standard_input(
    fake_providers, monkeypatch
):
    Startup.objects.create(name="Cli", slug="cli")
    fake_providers.account(KEY, golden_routes())
    line = json.dumps({"api_key": KEY, "project_id": "proj1ab2c3d4"})
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    out = io.StringIO()
    call_command(
        "connect_provider", "cli", "revenuecat", "--api-base", fake_providers.base_url, stdout=out
    )
    assert "Connected cli to revenuecat" in out.getvalue()
    call_command("sync_revenue", "--slug", "cli", stdout=io.StringIO())
    assert Startup.objects.get(slug="cli").verification.mrr == GOLDEN["mrr"]


@pytest.mark.django_db(transaction=True)
def test_revenuecat_connects_from_the_dashboard_and_shows_verified_everywhere(
    fake_providers, settings
):
    fake_providers.account(KEY, golden_routes())
    dashboard_connect(
        fake_providers, settings, provider="revenuecat", credential=KEY, slug="cat-app"
    )
    assert fake_providers.calls("/v2/projects", limit="1") == 1  # the key check
    # The dashboard syncs at the real time: the chart's points are all in the past, so the
    # months and the MRR are the golden ones.
    assert_verified_everywhere(
        "cat-app", provider="revenuecat", mrr=GOLDEN["mrr"], total=GOLDEN["total"]
    )
