"""A refresh worker that never runs a startup twice, never goes back in time, and is
never held by a provider that pages forever, drips bytes, sends too much or sends nonsense.

Everything goes through the local fake provider server (tests/support/verification_fakes.py).
"""

import io
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection as db_connection

from startups.models import MonthlyRevenue, Startup, Verification
from tests.support.processes import (
    process_env,
    run_to_the_end,
    skip_unless_the_database_can_be_shared,
)
from tests.support.verification_fakes import (
    NOW,
    FakeProviders,
    dripping,
    huge,
    ok,
    stripe_routes,
)
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import SyncInProgress, revenue_sync

pytestmark = pytest.mark.django_db


def sub(sid: str, unit: int) -> dict:
    return {
        "id": sid,
        "object": "subscription",
        "status": "active",
        "currency": "usd",
        "customer": f"cus_{sid}",
        "livemode": True,
        "items": {
            "object": "list",
            "has_more": False,
            "data": [
                {
                    "id": f"si_{sid}",
                    "quantity": 1,
                    "price": {
                        "id": f"price_{unit}",
                        "unit_amount": unit,
                        "recurring": {"interval": "month", "interval_count": 1},
                    },
                }
            ],
        },
    }


def charge_txn(tid: str, amount: int, created: int) -> dict:
    return {"id": tid, "type": "charge", "amount": amount, "currency": "usd", "created": created}


NOV_1 = 1793534400  # 2026-11-01 12:00 UTC


def connect(fake: FakeProviders, slug: str = "acme", **routes) -> ProviderConnection:
    startup = Startup.objects.create(name=slug.title(), slug=slug)
    token = f"rk_live_{slug}"
    routes.setdefault("subscriptions", [sub("sub_1", 4900)])
    routes.setdefault("balance_transactions", [charge_txn("txn_1", 4900, NOV_1)])
    fake.account(token, stripe_routes(**routes))
    return provider_connection_connect(
        startup=startup, provider="stripe", raw_key=token, api_base=fake.base_url
    )


def good_then(fake: FakeProviders, path: str, route) -> ProviderConnection:
    """A first good sync ($49 MRR, November $49), then `path` answers with `route`."""
    connection = connect(fake)
    revenue_sync(connection=connection, now=NOW)
    assert connection.status == "ok", connection.last_error
    fake.accounts["rk_live_acme"][path] = route
    return connection


def sync_fails(connection: ProviderConnection, message: str) -> float:
    """A sync of `connection` ends in an error that says `message`; returns its seconds."""
    started = time.monotonic()
    revenue_sync(connection=connection, now=NOW)
    elapsed = time.monotonic() - started
    assert connection.status == "error"
    assert message in connection.last_error
    return elapsed


def stripe_page(data: list[dict], *, has_more: bool = False):
    """A Stripe list route answering the same page of `data` every time."""
    return lambda query: ok({"object": "list", "data": data, "has_more": has_more})


def assert_kept_the_good_figures(connection: ProviderConnection) -> None:
    startup = Startup.objects.get(pk=connection.startup_id)
    assert startup.mrr == 49 and startup.verification.mrr == 49
    assert [(f"{r.month:%Y-%m}", r.gross) for r in MonthlyRevenue.objects.all()] == [
        ("2026-11", 49)
    ]


def test_endless_has_more_with_a_stuck_cursor_is_an_error(fake_providers):
    # The same page (same last id) forever with has_more: true.
    page = stripe_page([sub("sub_same", 100)], has_more=True)
    connection = good_then(fake_providers, "/v1/subscriptions", page)
    sync_fails(connection, "did not advance")
    assert fake_providers.calls("/v1/subscriptions") <= 3
    assert_kept_the_good_figures(connection)


def test_endless_has_more_with_new_ids_stops_at_the_page_cap(fake_providers, settings):
    settings.PROVIDER_MAX_PAGES = 20
    counter = iter(range(10**9))

    def endless(query):
        n = next(counter)
        return ok({"object": "list", "data": [sub(f"sub_{n}", 100)], "has_more": True})

    connection = good_then(fake_providers, "/v1/balance_transactions", endless)
    before = fake_providers.calls("/v1/balance_transactions")
    sync_fails(connection, "more than 20 pages")
    assert fake_providers.calls("/v1/balance_transactions") - before == 20
    assert_kept_the_good_figures(connection)


def test_a_dripping_body_is_cut_at_the_call_deadline(fake_providers, settings):
    # One byte every 3 s; the per-read timeout (15 s) never fires, the 2 s total deadline does.
    settings.PROVIDER_HTTP_TIMEOUT_SECONDS = 15
    settings.PROVIDER_HTTP_CALL_DEADLINE_SECONDS = 2
    connection = good_then(fake_providers, "/v1/subscriptions", dripping(every=3))
    elapsed = sync_fails(connection, "did not answer GET /v1/subscriptions in time")
    assert elapsed < 3.5, elapsed
    assert_kept_the_good_figures(connection)


def test_the_whole_sync_has_a_deadline_too(fake_providers, settings):
    # Each call would be allowed 60 s, but the sync as a whole only 1.5 s.
    settings.PROVIDER_HTTP_CALL_DEADLINE_SECONDS = 60
    settings.PROVIDER_SYNC_DEADLINE_SECONDS = 1.5
    connection = good_then(fake_providers, "/v1/balance_transactions", dripping(every=0.5))
    assert sync_fails(connection, "in time") < 3


@pytest.mark.parametrize("declare_length", [True, False])
def test_a_huge_body_is_refused_not_read_into_memory(fake_providers, settings, declare_length):
    settings.PROVIDER_HTTP_MAX_BODY_BYTES = 1024 * 1024
    route = huge(size=8 * 1024 * 1024, declare_length=declare_length)
    connection = good_then(fake_providers, "/v1/balance_transactions", route)
    sync_fails(connection, "sent more than 1 MB")
    assert_kept_the_good_figures(connection)


def test_many_pages_of_normal_size_are_capped_in_total_bytes(fake_providers, settings):
    # 30 pages of about 40 KB each, within the per-response cap, but over 1 MB together.
    settings.PROVIDER_SYNC_MAX_BYTES = 1024 * 1024
    padding = "x" * 40_000
    counter = iter(range(10**9))

    def pages(query):
        n = next(counter)
        data = [{**charge_txn(f"txn_{n}", 100, NOV_1), "description": padding}]
        return ok({"object": "list", "data": data, "has_more": n < 30})

    connection = good_then(fake_providers, "/v1/balance_transactions", pages)
    sync_fails(connection, "more than 1 MB in one sync")
    assert_kept_the_good_figures(connection)


def test_a_second_sync_run_while_one_holds_the_lease_skips_that_startup(fake_providers):
    connection = connect(fake_providers)
    far = NOW + timedelta(days=3650)
    ProviderConnection.objects.filter(pk=connection.pk).update(lease_owner="other", lease_until=far)
    out = io.StringIO()
    call_command("sync_revenue", "--all", stdout=out)
    assert "acme: another sync is running; skipped" in out.getvalue()
    assert "Synced 0 of 1 startup(s), 1 skipped" in out.getvalue()
    assert not Verification.objects.exists()
    assert fake_providers.calls("/v1/subscriptions") == 0


def test_a_negative_amount_is_an_error_and_nothing_is_written(fake_providers):
    bad = [charge_txn("txn_1", 4900, NOV_1), charge_txn("txn_2", -500, NOV_1)]
    connection = good_then(fake_providers, "/v1/balance_transactions", stripe_page(bad))
    sync_fails(connection, "negative")
    assert_kept_the_good_figures(connection)


def test_a_year_one_timestamp_is_an_error_not_24000_months(fake_providers):
    year_one = -62135596800  # 0001-01-01T00:00:00Z
    bad = [charge_txn("txn_1", 4900, NOV_1), charge_txn("txn_2", 100, year_one)]
    connection = good_then(fake_providers, "/v1/balance_transactions", stripe_page(bad))
    sync_fails(connection, "impossible date")
    assert MonthlyRevenue.objects.count() == 1
    assert_kept_the_good_figures(connection)


def test_a_broken_provider_delays_the_others_only_until_its_deadline(fake_providers, settings):
    settings.PROVIDER_SYNC_DEADLINE_SECONDS = 1.5
    slow = connect(fake_providers, "slow")
    fake_providers.accounts["rk_live_slow"]["/v1/subscriptions"] = dripping(every=0.5)
    connect(fake_providers, "fast")
    started = time.monotonic()
    out = io.StringIO()
    call_command("sync_revenue", "--all", stdout=out)
    assert time.monotonic() - started < 4
    statuses = dict(ProviderConnection.objects.values_list("startup__slug", "status"))
    assert statuses == {"slow": "error", "fast": "ok"}
    slow.refresh_from_db()
    assert "in time" in slow.last_error


# --- Two syncs of one connection at once (threads, each with its own database connection) --------


def in_thread(target, results: list) -> threading.Thread:
    def run() -> None:
        try:
            results.append(target())
        except Exception as exc:
            results.append(exc)
        finally:
            db_connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def hold_subscriptions(fake: FakeProviders, *, seconds: float):
    """Acme's `/v1/subscriptions` calls wait (up to `seconds`) until `release` is set; `entered`
    is set when one arrives. Returns (entered, release, the plain route)."""
    entered, release = threading.Event(), threading.Event()
    plain = fake.accounts["rk_live_acme"]["/v1/subscriptions"]

    def held(query):
        entered.set()
        release.wait(seconds)
        return plain(query)

    fake.accounts["rk_live_acme"]["/v1/subscriptions"] = held
    return entered, release, plain


@pytest.mark.django_db(transaction=True)
def test_only_one_sync_of_a_connection_runs_at_a_time(fake_providers):
    connection = connect(fake_providers)
    entered, release, plain = hold_subscriptions(fake_providers, seconds=10)
    results: list = []
    first = in_thread(lambda: revenue_sync(connection=connection, now=NOW), results)
    assert entered.wait(10)
    with pytest.raises(SyncInProgress):
        revenue_sync(connection=ProviderConnection.objects.get(pk=connection.pk), now=NOW)
    release.set()
    first.join(10)
    assert results[0].status == "ok", results
    # The lease is released: the next sync runs.
    fake_providers.accounts["rk_live_acme"]["/v1/subscriptions"] = plain
    assert revenue_sync(connection=connection, now=NOW).status == "ok"


@pytest.mark.django_db(transaction=True)
def test_an_older_fetch_finishing_last_never_overwrites_newer_figures(fake_providers, settings):
    # The lease is made to expire (as after a crash) so two syncs overlap: A starts first and
    # sees MRR $125 but finishes last; B starts later, sees $150 and finishes first. B's figures
    # must stay: MRR 150 and B's verifiedAt.
    settings.PROVIDER_SYNC_LEASE_SECONDS = 0.2
    connection = connect(fake_providers)
    entered, release = threading.Event(), threading.Event()
    calls = iter(range(100))

    def subscriptions(query):
        if next(calls) == 0:  # sync A's call: the old state, answered late
            entered.set()
            release.wait(10)
            data = [sub("sub_1", 12500)]
        else:
            data = [sub("sub_1", 15000)]
        return ok({"object": "list", "data": data, "has_more": False})

    fake_providers.accounts["rk_live_acme"]["/v1/subscriptions"] = subscriptions
    results: list = []
    sync_a = in_thread(lambda: revenue_sync(connection=connection, now=NOW), results)
    assert entered.wait(10)
    time.sleep(0.4)  # A's lease has expired
    later = NOW + timedelta(hours=1)
    b = revenue_sync(connection=ProviderConnection.objects.get(pk=connection.pk), now=later)
    assert b.status == "ok", b.last_error
    release.set()
    sync_a.join(10)
    assert not isinstance(results[0], Exception), results
    startup = Startup.objects.get(slug="acme")
    assert startup.mrr == 150
    verification = Verification.objects.get(startup=startup)
    assert (verification.mrr, verification.verified_at) == (150, later)
    stored = ProviderConnection.objects.get(pk=connection.pk)
    assert (stored.status, stored.last_synced_at) == ("ok", later)


# --- Two `sync_revenue` processes at once --------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)
def test_two_sync_processes_at_once_sync_a_startup_once(fake_providers):
    # Process 1 takes the lease and is held inside its first provider call; process 2, started
    # meanwhile, finds the lease taken and skips the startup without calling the provider; once
    # process 1 is let go it writes its figures.
    skip_unless_the_database_can_be_shared()
    connect(fake_providers)
    entered, release, _ = hold_subscriptions(fake_providers, seconds=30)
    command = [sys.executable, "manage.py", "sync_revenue", "--slug", "acme"]
    first = subprocess.Popen(
        command, cwd=ROOT, env=process_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert entered.wait(30), first.stderr.read() if first.poll() is not None else ""
        second = run_to_the_end(command, cwd=ROOT, env=process_env(), timeout=60)
        assert "acme: another sync is running; skipped" in second
        assert fake_providers.calls("/v1/subscriptions") == 1
    finally:
        release.set()
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert "acme: ok" in out.decode()
    assert Verification.objects.get(startup__slug="acme").mrr == 49
