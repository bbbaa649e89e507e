"""End to end: connect four startups with `connect_provider`, run `sync_revenue --all` against
the fake providers, then read each through GET /api/v1/startups/{slug}."""

import io
import logging
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from startups.models import Startup
from tests.support.verification_fakes import (
    NOW,
    FakeProviders,
    always,
    gumroad_routes,
    lemonsqueezy_routes,
    polar_month,
    polar_routes,
    stripe_account,
)
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db

KEYS = {
    "stripe-co": "rk_live_stripe_secret",
    "lemon-co": "ls_secret_key",
    "polar-co": "polar_oat_secret",
    "gumroad-co": "gumroad_secret_token",
}


@pytest.fixture
def fake(fake_providers, monkeypatch):
    """The fake providers, with the clock stopped at NOW for the commands."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    return fake_providers


def connect(fake: FakeProviders, slug: str, provider: str, routes: dict, monkeypatch) -> None:
    Startup.objects.create(name=slug, slug=slug, mrr=123456, arr=1481472)
    fake.account(KEYS[slug], routes)
    monkeypatch.setattr(sys, "stdin", io.StringIO(KEYS[slug] + "\n"))
    call_command(
        "connect_provider", slug, provider, "--api-base", fake.base_url, stdout=io.StringIO()
    )


def connect_refused(monkeypatch, stdin: str, error: type[Exception], match: str) -> None:
    """`connect_provider x stripe`, reading `stdin`, raises `error` saying `match`; nothing is
    connected."""
    Startup.objects.create(name="x", slug="x")
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with pytest.raises(error, match=match):
        call_command("connect_provider", "x", "stripe", stdout=io.StringIO())
    assert not ProviderConnection.objects.exists()


def connect_all(fake: FakeProviders, monkeypatch) -> None:
    # Stripe: $49/month, one charge of $49 on Nov 1.
    connect(
        fake,
        "stripe-co",
        "stripe",
        stripe_account(charged=int(datetime(2026, 11, 1, tzinfo=UTC).timestamp())),
        monkeypatch,
    )
    # Lemon Squeezy: $120/year = $10 MRR; one $120 order on Oct 10.
    connect(
        fake,
        "lemon-co",
        "lemonsqueezy",
        lemonsqueezy_routes(
            stores=[{"id": 7, "currency": "USD"}],
            prices=[{"id": 3, "unit_price": 12000, "renewal_interval_unit": "year"}],
            subscriptions=[
                {
                    "id": 1,
                    "store_id": 7,
                    "customer_id": 1,
                    "status": "active",
                    "first_subscription_item": {"price_id": 3, "quantity": 1},
                }
            ],
            orders=[
                {
                    "id": 1,
                    "currency": "USD",
                    "status": "paid",
                    "total": 12000,
                    "created_at": "2026-10-10T00:00:00Z",
                }
            ],
            invoices=[],
        ),
        monkeypatch,
    )
    # Polar: MRR 2,500 cents = $25; November revenue $25.
    connect(
        fake,
        "polar-co",
        "polar",
        polar_routes(
            min_date="2026-11-01",
            monthly=[polar_month("2026-11", revenue=2500, mrr=2500)],
            daily=[{"timestamp": "2026-11-01T00:00:00Z", "revenue": 2500}],
            subscriptions=[{"id": "s1", "status": "active", "amount": 2500, "customer_id": "c1"}],
        ),
        monkeypatch,
    )
    # Gumroad: one $15 sale on Nov 3; no subscription data.
    connect(
        fake,
        "gumroad-co",
        "gumroad",
        gumroad_routes(
            sales=[
                {
                    "id": "s1",
                    "email": "a@example.com",
                    "price": 1500,
                    "currency": "usd",
                    "created_at": "2026-11-03T00:00:00Z",
                }
            ]
        ),
        monkeypatch,
    )


def detail(slug: str) -> dict:
    response = Client().get(f"/api/v1/startups/{slug}")
    assert response.status_code == 200
    return response.json()["data"]


def test_sync_all_then_the_api_shows_every_verification(fake, monkeypatch, caplog):
    connect_all(fake, monkeypatch)
    out = io.StringIO()
    with caplog.at_level(logging.DEBUG):
        call_command("sync_revenue", "--all", stdout=out)
    assert "Synced 4 of 4 startup(s)." in out.getvalue()

    stripe = detail("stripe-co")
    assert stripe["revenue"] == {
        "mrr": 49,
        "arr": 588,
        "currency": "USD",
        "verified": True,
        "source": "verified",
        "lastSyncedAt": "2026-11-15T12:00:00.000Z",
        "growth30d": None,  # one day of history
    }
    verification = dict(stripe["verification"])
    # The verification object also says how fresh the figures are and how they were computed.
    assert verification.pop("lastSyncedAt") == "2026-11-15T12:00:00.000Z"
    assert verification.pop("methodology") == "http://testserver/docs/methodology/v2"
    assert verification.pop("methodologyVersion") == "v2"
    assert verification.pop("status") in {"ok", "stale"}  # depends on the real clock
    assert verification == {
        "provider": "stripe",
        "level": "verified",
        "verifiedAt": "2026-11-15T12:00:00.000Z",
        "currency": "USD",
        "mrr": 49,
        "arr": 588,
        "totalRevenue": 49,
        "last30Days": 49,
        "customers": 1,
        "historyMonths": 1,
        "monthly": [{"month": "2026-11", "gross": 49, "refunds": 0, "net": 49}],
        "credential": "restricted_read",
        "providerReported": None,  # Stripe's API publishes no MRR of its own
    }

    lemon = detail("lemon-co")["verification"]
    assert lemon["credential"] == "full_access"  # Lemon Squeezy has no read-only key
    assert (lemon["mrr"], lemon["arr"], lemon["totalRevenue"]) == (10, 120, 120)
    assert [row["month"] for row in lemon["monthly"]] == ["2026-10", "2026-11"]
    assert lemon["historyMonths"] == 2

    polar = detail("polar-co")["verification"]
    assert (polar["mrr"], polar["totalRevenue"], polar["last30Days"]) == (25, 25, 25)

    gumroad = detail("gumroad-co")
    assert gumroad["revenue"]["mrr"] is None and gumroad["revenue"]["verified"] is True
    assert gumroad["verification"]["mrr"] is None
    assert gumroad["verification"]["totalRevenue"] == 15

    # The keys appear nowhere: not in logs, output, the API or the database column.
    for slug, key in KEYS.items():
        assert key not in caplog.text and key not in out.getvalue()
        assert key not in str(Client().get(f"/api/v1/startups/{slug}").content)
        assert key not in ProviderConnection.objects.get(startup__slug=slug).encrypted_key


def test_a_revoked_key_does_not_stop_the_others_and_keeps_its_figures(fake, monkeypatch):
    connect_all(fake, monkeypatch)
    call_command("sync_revenue", "--all", stdout=io.StringIO())
    fake.revoke(KEYS["stripe-co"])
    fake.accounts[KEYS["polar-co"]]["/v1/metrics/limits"] = lambda query: (500, {}, {})

    out = io.StringIO()
    call_command("sync_revenue", "--all", stdout=out)
    assert "Synced 2 of 4 startup(s)." in out.getvalue()
    assert "stripe-co: key_revoked" in out.getvalue()
    statuses = dict(ProviderConnection.objects.values_list("startup__slug", "status"))
    assert statuses == {
        "stripe-co": "key_revoked",
        "lemon-co": "ok",
        "polar-co": "error",
        "gumroad-co": "ok",
    }
    stripe = detail("stripe-co")
    assert stripe["revenue"]["mrr"] == 49 and stripe["verification"]["mrr"] == 49
    assert stripe["verification"]["status"] == "key_revoked"  # figures kept, not zeroed
    assert stripe["verification"]["lastSyncedAt"] == "2026-11-15T12:00:00.000Z"
    assert detail("polar-co")["verification"]["mrr"] == 25


def test_sync_one_slug_fails_loudly_when_it_did_not_succeed(fake, monkeypatch):
    connect_all(fake, monkeypatch)
    fake.revoke(KEYS["gumroad-co"])
    with pytest.raises(Exception, match="did not succeed"):
        call_command("sync_revenue", "--slug", "gumroad-co", stdout=io.StringIO())
    assert detail("gumroad-co")["revenue"]["verified"] is False


def test_connect_provider_refuses_a_missing_key(fake, monkeypatch):
    connect_refused(monkeypatch, "", Exception, "no key")


def test_loop_mode_refreshes_every_period_and_survives_a_bad_round(fake, monkeypatch):
    # The loop wakes every 5 minutes and syncs the connections whose hour
    # is up, so the second sync happens once the clock has moved on by an hour.
    connect_all(fake, monkeypatch)
    from verification.management.commands import sync_revenue

    rounds = []

    def sleep(seconds: float) -> None:
        rounds.append(seconds)
        if len(rounds) == 1:
            fake.revoke(KEYS["stripe-co"])
            monkeypatch.setattr(timezone, "now", lambda: NOW + timedelta(minutes=30))
        if len(rounds) == 2:
            # Half an hour on: nothing is due yet, the revoked key is not even tried.
            assert ProviderConnection.objects.get(startup__slug="stripe-co").status == "ok"
            monkeypatch.setattr(timezone, "now", lambda: NOW + timedelta(minutes=61))
        if len(rounds) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(sync_revenue.time, "sleep", sleep)
    with pytest.raises(KeyboardInterrupt):
        call_command("sync_revenue", "--all", "--loop", stdout=io.StringIO())
    assert rounds == [300, 300, 300]
    assert ProviderConnection.objects.get(startup__slug="stripe-co").status == "key_revoked"
    assert ProviderConnection.objects.get(startup__slug="polar-co").status == "ok"


def test_two_workers_never_sync_one_startup_at_once_and_recent_syncs_are_skipped(fake, monkeypatch):
    from verification.scheduling import connection_take, connections_due

    connect_all(fake, monkeypatch)
    every = timedelta(hours=1)
    stripe_co = ProviderConnection.objects.get(startup__slug="stripe-co")
    assert connection_take(connection=stripe_co, now=NOW, every=every) is True
    # A second worker (same moment or minutes later) finds it taken and not due.
    assert connection_take(connection=stripe_co, now=NOW, every=every) is False
    later = NOW + timedelta(minutes=5)
    assert stripe_co not in connections_due(now=later, every=every)
    assert connection_take(connection=stripe_co, now=later, every=every) is False
    assert connection_take(connection=stripe_co, now=NOW + every, every=every) is True


def test_the_worker_survives_a_provider_outage(fake, monkeypatch):
    connect_all(fake, monkeypatch)
    from verification.management.commands import sync_revenue

    for path in ("/v1/subscriptions", "/v1/balance_transactions"):
        fake.accounts[KEYS["stripe-co"]][path] = always(503)

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sync_revenue.time, "sleep", sleep)
    with pytest.raises(KeyboardInterrupt):
        call_command("sync_revenue", "--all", "--loop", stdout=io.StringIO())
    statuses = dict(ProviderConnection.objects.values_list("startup__slug", "status"))
    assert statuses.pop("stripe-co") in {"stale", "error"}  # figures kept, retried next hour
    assert statuses == {"lemon-co": "ok", "polar-co": "ok", "gumroad-co": "ok"}


def test_disconnecting_ends_verification(fake, monkeypatch):
    connect_all(fake, monkeypatch)
    call_command("sync_revenue", "--slug", "stripe-co", stdout=io.StringIO())
    assert detail("stripe-co")["revenue"]["verified"] is True
    call_command("disconnect_provider", "stripe-co", stdout=io.StringIO())
    data = detail("stripe-co")
    assert data["revenue"] == {
        "mrr": None,
        "arr": None,
        "currency": "USD",
        "verified": False,
        "source": "self_reported",
        "lastSyncedAt": None,
        "growth30d": None,
    }
    assert data["verification"] is None
    assert not ProviderConnection.objects.filter(startup__slug="stripe-co").exists()


def test_connect_provider_takes_no_key_on_the_command_line_and_checks_the_api_base(
    fake, monkeypatch
):
    Startup.objects.create(name="x", slug="x")
    with pytest.raises(Exception, match="unrecognized arguments"):
        call_command("connect_provider", "x", "stripe", "rk_live_on_argv", stdout=io.StringIO())
    monkeypatch.setattr(sys, "stdin", io.StringIO("rk_live_key\n"))
    with pytest.raises(Exception, match="api-base must be an http"):
        call_command("connect_provider", "x", "stripe", "--api-base", "file:///etc/passwd")
    assert not ProviderConnection.objects.exists()


def test_connect_provider_refuses_test_mode_keys_and_says_why(fake, monkeypatch):
    message = "not connected: this is a Stripe test-mode key"
    connect_refused(monkeypatch, "sk_test_51Habc\n", CommandError, message)


def test_connect_provider_says_a_lemon_squeezy_key_is_not_read_only(fake, monkeypatch):
    out = io.StringIO()
    Startup.objects.create(name="lemon", slug="lemon")
    fake.account("ls_key", lemonsqueezy_routes(
        stores=[], prices=[], subscriptions=[], orders=[], invoices=[]
    ))  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO("ls_key\n"))
    call_command(
        "connect_provider", "lemon", "lemonsqueezy", "--api-base", fake.base_url, stdout=out
    )
    assert "cannot issue a read-only key" in out.getvalue()
