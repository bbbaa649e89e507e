"""The Free monthly allowance: counting, headers, meta, per-IP callers and month rollover."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.clientip import client_address, client_key
from quota.confirmations import quota_confirm_pending
from quota.models import MonthlyUsage, QuotaHold
from quota.plans import FREE, PRO
from quota.services import (
    Caller,
    QuotaExceeded,
    quota_reservation,
    quota_reserve,
    quota_status,
)
from tests.support.caches import DELIVERY_QUERIES, EXTRA_RESERVE_QUERIES, clear_caches
from tests.support.factories import bearer, make_api_key, make_startups, make_subscription
from tests.support.processes import skip_behind_pgbouncer

LIST = "/api/v1/startups"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def used_by(account) -> int:
    return sum(MonthlyUsage.objects.filter(account=account).values_list("used", flat=True))


def spend(account, count: int) -> None:
    quota_reserve(caller=Caller(plan=FREE, account_id=account.pk), wanted=count)


@pytest.fixture
def startups(db):
    return make_startups(25)


# Counting


def test_a_list_counts_the_items_it_returns(api_client, api_key, startups):
    obj, raw = api_key
    response = api_client.get(LIST, {"limit": 7}, **bearer(raw))
    assert len(response.json()["data"]) == 7
    assert used_by(obj.account) == 7
    api_client.get(LIST, {"limit": 10, "page": 3}, **bearer(raw))  # 5 left on page 3
    assert used_by(obj.account) == 12


def test_a_page_past_the_end_counts_nothing(api_client, api_key, startups):
    obj, raw = api_key
    response = api_client.get(LIST, {"page": 99}, **bearer(raw))
    assert response.json()["data"] == []
    assert used_by(obj.account) == 0


def test_a_detail_call_counts_one(api_client, api_key, startups):
    obj, raw = api_key
    response = api_client.get(f"{LIST}/{startups[0].slug}", **bearer(raw))
    assert response.status_code == 200
    assert used_by(obj.account) == 1
    assert response["X-Service-Quota-Remaining"] == "99"


def test_a_404_counts_nothing_and_carries_the_headers(api_client, api_key, startups):
    obj, raw = api_key
    response = api_client.get(f"{LIST}/no-such-startup", **bearer(raw))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert used_by(obj.account) == 0
    assert response["X-Service-Quota-Remaining"] == "100"


def test_all_keys_of_an_account_share_one_allowance(api_client, api_key, startups):
    obj, raw = api_key
    _, second = make_api_key(account=obj.account)
    api_client.get(LIST, **bearer(raw))
    response = api_client.get(LIST, **bearer(second))
    assert response.json()["meta"]["quota"]["used"] == 20


def test_when_fewer_remain_only_those_are_returned_with_a_notice(api_client, api_key, startups):
    obj, raw = api_key
    spend(obj.account, 97)
    response = api_client.get(LIST, {"limit": 10, "page": 2}, **bearer(raw))
    body = response.json()
    assert [item["rank"] for item in body["data"]] == [11, 12, 13]
    assert body["meta"]["limit"] == 3
    assert body["meta"]["hasMore"] is True
    assert "3" in body["meta"]["notice"] and "resets" in body["meta"]["notice"]
    assert body["meta"]["quota"] == {
        "limit": 100,
        "used": 100,
        "remaining": 0,
        "resetsAt": response["X-Service-Quota-Reset"],
    }


def test_at_zero_the_api_answers_429_with_the_allowance_and_reset(api_client, api_key, startups):
    obj, raw = api_key
    spend(obj.account, 100)
    for url in (LIST, f"{LIST}/{startups[0].slug}"):
        response = api_client.get(url, **bearer(raw))
        assert response.status_code == 429
        error = response.json()["error"]
        assert error["code"] == "monthly_quota_exceeded"
        assert "100" in error["message"]
        assert response["X-Service-Quota-Reset"] in error["message"]
        assert int(response["Retry-After"]) > 0
        assert response["X-Service-Quota-Remaining"] == "0"
        assert response["X-Service-Plan"] == "Free"
    assert used_by(obj.account) == 100


def test_pro_has_no_cap(api_client, api_key, startups):
    obj, raw = api_key
    make_subscription(account=obj.account)
    spend(obj.account, 100)
    response = api_client.get(LIST, {"limit": 50}, **bearer(raw))
    assert response.status_code == 200
    assert len(response.json()["data"]) == 25


def test_records_served_on_pro_do_not_count_against_free_after_a_lapse(
    api_client, api_key, startups
):
    obj, raw = api_key
    spend(obj.account, 30)  # on Free earlier this month
    subscription = make_subscription(account=obj.account)
    for page in (1, 2, 3):
        response = api_client.get(LIST, {"limit": 50, "page": page}, **bearer(raw))
        assert response.status_code == 200
    assert used_by(obj.account) == 30
    subscription.current_period_end = timezone.now() - timedelta(seconds=1)
    subscription.save()
    response = api_client.get(LIST, **bearer(raw))
    assert response["X-Service-Plan"] == "Free"
    assert response["X-Service-Quota-Remaining"] == "60"


# Headers and meta


def test_free_responses_carry_all_five_headers_and_meta_quota(api_client, api_key, startups):
    response = api_client.get(LIST, **bearer(api_key[1]))
    assert response["X-Service-Plan"] == "Free"
    assert response["X-Service-Max-Limit"] == "10"
    assert response["X-Service-Quota-Limit"] == "100"
    assert response["X-Service-Quota-Remaining"] == "90"
    assert ISO.match(response["X-Service-Quota-Reset"])
    meta = response.json()["meta"]
    assert (meta["plan"], meta["maxLimit"]) == ("Free", 10)
    assert meta["quota"]["remaining"] == 90
    assert meta["quota"]["resetsAt"] == response["X-Service-Quota-Reset"]
    assert "notice" not in meta


def test_a_limit_above_the_plan_maximum_is_lowered_with_a_notice(api_client, startups):
    response = api_client.get(LIST, {"limit": 30})
    meta = response.json()["meta"]
    assert meta["limit"] == 10
    assert "10" in meta["notice"] and "Free" in meta["notice"]


def test_the_quota_headers_are_readable_by_browsers(api_client, startups):
    response = api_client.get(LIST, HTTP_ORIGIN="https://example.org")
    exposed = response["Access-Control-Expose-Headers"].lower()
    for name in ("plan", "max-limit", "quota-limit", "quota-remaining", "quota-reset"):
        assert f"x-service-{name}" in exposed


def test_the_reset_is_the_first_of_next_month_at_midnight_utc(db):
    caller = Caller(plan=FREE, client="198.51.100.1")
    status = quota_status(caller=caller, now=datetime(2026, 12, 31, 23, 59, tzinfo=UTC))
    assert status.resets_at == datetime(2027, 1, 1, tzinfo=UTC)


# Per client address


def test_without_a_key_the_allowance_is_counted_per_ip(api_client, startups):
    api_client.get(LIST, REMOTE_ADDR="203.0.113.5")
    api_client.get(LIST, REMOTE_ADDR="203.0.113.5")
    other = api_client.get(LIST, REMOTE_ADDR="203.0.113.6")
    assert other["X-Service-Quota-Remaining"] == "90"
    assert MonthlyUsage.objects.get(client="203.0.113.5").used == 20


def test_a_client_cannot_dodge_the_allowance_with_x_forwarded_for(api_client, startups):
    for fake in ("1.1.1.1", "2.2.2.2"):
        api_client.get(LIST, REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR=fake)
    assert MonthlyUsage.objects.get(client="203.0.113.5").used == 20
    assert not MonthlyUsage.objects.filter(client__in=["1.1.1.1", "2.2.2.2"]).exists()


@override_settings(TRUSTED_PROXIES=["10.0.0.0/8"])
def test_behind_a_trusted_proxy_the_right_most_untrusted_address_counts(api_client, startups):
    api_client.get(
        LIST, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9, 10.0.0.7"
    )
    assert MonthlyUsage.objects.get().client == "203.0.113.9"


@override_settings(TRUSTED_PROXIES=["10.0.0.1"])
def test_client_address_rules():
    assert str(client_address(remote_addr="203.0.113.1", forwarded_for="9.9.9.9")) == "203.0.113.1"
    assert str(client_address(remote_addr="10.0.0.1", forwarded_for="9.9.9.9")) == "9.9.9.9"
    assert str(client_address(remote_addr="10.0.0.1", forwarded_for=None)) == "10.0.0.1"
    assert str(client_address(remote_addr="10.0.0.1", forwarded_for="junk, 8.8.8.8")) == "8.8.8.8"
    assert str(client_address(remote_addr="10.0.0.1", forwarded_for="8.8.8.8, junk")) == "10.0.0.1"


def test_ipv6_clients_are_counted_per_64_network():
    one = client_key(client_address(remote_addr="2001:db8:1:2::1", forwarded_for=None))
    two = client_key(client_address(remote_addr="2001:db8:1:2:ffff::9", forwarded_for=None))
    assert one == two == "2001:db8:1:2::/64"
    assert client_key(client_address(remote_addr="::ffff:192.0.2.7", forwarded_for=None)) == (
        "192.0.2.7"
    )


# Month rollover, with a controlled clock


def test_the_allowance_starts_again_on_the_first_of_the_month(api_key):
    obj, _ = api_key
    caller = Caller(plan=FREE, account_id=obj.account_id)
    last_second = datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
    assert quota_reserve(caller=caller, wanted=60, now=last_second).granted == 60
    assert quota_reserve(caller=caller, wanted=60, now=last_second).granted == 40
    with pytest.raises(QuotaExceeded):
        quota_reserve(caller=caller, wanted=1, now=last_second)
    first_second = last_second + timedelta(seconds=1)
    assert quota_reserve(caller=caller, wanted=60, now=first_second).granted == 60
    assert quota_status(caller=caller, now=last_second).used == 100
    assert quota_status(caller=caller, now=first_second).used == 60


def test_the_api_serves_again_after_the_month_turns(api_client, api_key, startups, monkeypatch):
    obj, raw = api_key
    clock = {"now": datetime(2026, 11, 30, 23, 0, tzinfo=UTC)}
    monkeypatch.setattr("django.utils.timezone.now", lambda: clock["now"])
    spend(obj.account, 100)
    blocked = api_client.get(LIST, **bearer(raw))
    assert blocked.status_code == 429
    assert blocked["X-Service-Quota-Reset"] == "2026-12-01T00:00:00.000Z"
    assert blocked["Retry-After"] == "3600"
    clock["now"] = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    served = api_client.get(LIST, **bearer(raw))
    assert served.status_code == 200
    assert served["X-Service-Quota-Remaining"] == "90"
    assert served["X-Service-Quota-Reset"] == "2027-01-01T00:00:00.000Z"


def test_an_uncapped_reservation_grants_everything_and_counts_nothing(db):
    caller = Caller(plan=PRO, client="198.51.100.2")
    assert quota_reserve(caller=caller, wanted=50).granted == 50
    assert quota_reserve(caller=caller, wanted=50).granted == 50
    assert not MonthlyUsage.objects.exists()


def test_a_reservation_carries_the_figures_a_status_read_would_give(db):
    # The headers and meta take the figures from the reservation instead of reading the
    # counter again: they must be what that read would say, refunds and expired holds included.
    caller = Caller(plan=FREE, client="198.51.100.3")
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    quota_reserve(caller=caller, wanted=7, now=now - timedelta(days=1))  # its hold expired
    with quota_reservation(caller=caller, wanted=10, now=now) as reservation:
        reservation.use(4)
    assert reservation.status == quota_status(caller=caller, now=now)
    assert (reservation.status.used, reservation.status.remaining) == (4, 96)
    with quota_reservation(caller=caller, wanted=10, now=now, spend=False) as head:
        head.use(10)
    assert head.status == quota_status(caller=caller, now=now)
    pro = Caller(plan=PRO, client="198.51.100.4")
    with quota_reservation(caller=pro, wanted=50, now=now) as uncapped:
        uncapped.use(3)
    assert uncapped.status == quota_status(caller=pro, now=now)  # uncapped: nothing counted


@override_settings(TRUSTED_PROXIES=["10.0.0.0/8", "not-an-address"])
def test_a_bad_trusted_proxies_entry_fails_the_system_check():
    from quota.apps import check_trusted_proxies

    assert [error.id for error in check_trusted_proxies()] == ["quota.E001"]


def test_a_metered_list_costs_five_queries_with_a_key_and_three_without(
    api_client, api_key, startups, django_assert_num_queries, settings
):
    settings.READ_CACHE_SECONDS = 0  # the database path (per-process copies: test_readcache)
    _, raw = api_key
    api_client.get(LIST, **bearer(raw))  # first use: creates the month row, stamps last_used
    api_client.get(LIST)
    clear_caches()  # the list cache (total, page, ranks) starts cold
    # key with its account's plan, reserve (which returns the new count: no status read),
    # count, page, and on SQLite once the answer is written the delivery confirmation, so
    # records never delivered are never charged (on SQLite the reserve is a transaction; on
    # PostgreSQL the next charge carries the confirmation)
    with django_assert_num_queries(4 + DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES):
        api_client.get(LIST, **bearer(raw))
    # reserve, page rows by id (total and page from the list cache), delivery
    with django_assert_num_queries(2 + DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES):
        api_client.get(LIST)


@pytest.mark.django_db(transaction=True)
def test_a_free_answer_outside_a_test_transaction_is_two_statements(client):
    """As in production (autocommit, no test transaction around the request): the tokens and
    the charge with its hold. On PostgreSQL the charge also deletes the holds of the answers
    delivered before it (tests/quota/test_confirmations.py); on SQLite the charge is a
    transaction of its own and, once the answer is written, the hold's removal one statement
    (the ORM's delete wrapped it in BEGIN and COMMIT: three round trips)."""
    make_startups(12)
    _, raw = make_api_key()
    client.get(LIST, **bearer(raw))  # first use: the month's row, the key's last use
    client.get(LIST, **bearer(raw))  # the page and its rows kept
    with CaptureQueriesContext(connection) as queries:
        response = client.get(LIST, **bearer(raw))
    assert response.status_code == 200
    assert response["X-Service-Quota-Remaining"] == "70"
    statements = [query["sql"] for query in queries.captured_queries]
    assert len(statements) == 2 + DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES, statements
    assert "DELETE FROM quota_quotahold" in statements[-1]
    quota_confirm_pending()  # PostgreSQL: the flusher's or the next charge's work
    assert not QuotaHold.objects.exists()  # delivered: nothing left to give back


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements: PostgreSQL")
@skip_behind_pgbouncer  # prepared statements are off there
@pytest.mark.django_db(transaction=True)
def test_the_statements_of_every_free_request_are_prepared_once(client):
    """PostgreSQL plans the tokens' read and the charge (which carries the deliveries'
    confirmations) once per connection (the charge's plan alone took 0.5-0.7 ms of every Free
    request), whatever the number of confirmations it carries."""
    make_startups(12)
    _, raw = make_api_key()
    for _ in range(7):  # psycopg prepares a statement on its 5th use
        assert client.get(LIST, **bearer(raw)).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any("openstartup_generation" in sql for sql in prepared), prepared
    charges = [sql for sql in prepared if sql.startswith("WITH deleted AS (DELETE FROM quota_")]
    assert len(charges) == 1, prepared


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit: PostgreSQL")
@pytest.mark.parametrize("wait", [False, True])
def test_the_charge_and_the_delivery_commit_without_waiting_for_the_wal_flush(
    db, client, settings, wait
):
    """A charge that waited for the WAL flush held the usage row's lock through an fsync: one
    account's Free requests queued behind each other's disk writes. The test's transaction
    wraps the request, so the setting its statements made for it is still visible; the
    operator's QUOTA_SYNCHRONOUS_COMMIT=1 leaves it as it was."""
    settings.QUOTA_SYNCHRONOUS_COMMIT = wait
    make_startups(12)
    _, raw = make_api_key()
    response = client.get(LIST, **bearer(raw))
    assert response.status_code == 200
    assert synchronous_commit() == ("on" if wait else "off")
    assert used_by(MonthlyUsage.objects.get().account) == 10


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_the_asynchronous_commit_never_outlives_its_statement(client):
    """No session state (PgBouncer in transaction mode hands the connection to another
    client): after a Free answer, the connection commits synchronously again."""
    make_startups(12)
    _, raw = make_api_key()
    for _ in range(2):
        response = client.get(LIST, **bearer(raw))
        assert response.status_code == 200
        assert synchronous_commit() == "on"
    assert used_by(MonthlyUsage.objects.get().account) == 20
    quota_confirm_pending()
    assert not QuotaHold.objects.exists()


def test_clearing_the_cache_does_not_reset_the_allowance(api_client, api_key, startups):

    _, raw = api_key
    api_client.get(LIST, **bearer(raw))
    clear_caches()
    assert api_client.get(LIST, **bearer(raw))["X-Service-Quota-Remaining"] == "80"


def test_an_operator_allowance_override_replaces_the_free_allowance(api_client, startups):
    api_key, raw = make_api_key()
    api_key.account.monthly_allowance_override = 1000
    api_key.account.save()
    response = api_client.get(LIST, **bearer(raw))
    assert response["X-Service-Quota-Limit"] == "1000"
    assert response["X-Service-Quota-Remaining"] == "990"
    assert response.json()["meta"]["quota"]["limit"] == 1000


def test_an_allowance_override_leaves_pro_uncapped(api_client, startups):
    api_key, raw = make_api_key()
    make_subscription(account=api_key.account)
    api_key.account.monthly_allowance_override = 5
    api_key.account.save()
    response = api_client.get(LIST, **bearer(raw))
    assert response["X-Service-Plan"] == "Pro"
    assert "X-Service-Quota-Limit" not in response
