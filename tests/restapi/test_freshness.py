"""A sync that found the same figures writes no Change row and keeps the kept copies, yet its
sync time shows at once: the freshness fields are read beside the kept profile JSON and list
rows (startups/freshness.py `FRESHNESS`), not from inside them."""

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from core import readcache
from restapi.profiles import PROFILES
from startups import pagecache
from startups.freshness import verification_stamp
from startups.models import Change
from startups.selectors import StartupFilters
from startups.serializers import StartupListSerializer
from tests.support.connectors import stripe_connection
from tests.support.factories import (
    make_api_key,
    make_startup,
    make_subscription,
    make_verification,
)
from tests.support.verification_fakes import NOW
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db

FIRST, SECOND = NOW, NOW + timedelta(days=3)  # the same month: the same figures


@pytest.fixture(autouse=True)
def read_cache_on(settings):
    settings.READ_CACHE_SECONDS = 300
    # Stale after the first sync, fresh after the second: the status moves with the time alone.
    hours = (timezone.now() - SECOND) / timedelta(hours=1)
    settings.VERIFICATION_STALE_HOURS = max(1, math.ceil(hours) + 1)


@pytest.fixture
def pro(db) -> dict:
    key, raw = make_api_key()
    make_subscription(account=key.account)
    return {"HTTP_X_API_KEY": raw}


def read_all(client, headers: dict) -> dict:
    """The sync time and status as the detail and the list show them, in both key styles."""
    detail = client.get("/api/v1/startups/acme", **headers).json()["data"]
    fields = client.get("/api/v1/startups/acme?fields=revenue,verification", **headers)
    listed = client.get("/api/v1/startups", **headers).json()["data"]
    sparse = client.get("/api/v1/startups?fields=name,revenue.lastSyncedAt", **headers)
    (row,) = [item for item in listed if item["slug"] == "acme"]
    (sparse_row,) = sparse.json()["data"]
    return {
        "detail": detail["revenue"]["lastSyncedAt"],
        "detail_verification": detail["verification"]["lastSyncedAt"],
        "detail_verified_at": detail["verification"]["verifiedAt"],
        "detail_status": detail["verification"]["status"],
        "sparse_detail": fields.json()["data"]["revenue"]["lastSyncedAt"],
        "list": row["revenue"]["lastSyncedAt"],
        "sparse_list": sparse_row["revenue"]["lastSyncedAt"],
    }


def test_a_sync_that_changed_nothing_shows_its_time_at_once(client, pro, fake_providers):
    connection = stripe_connection(fake_providers)
    revenue_sync(connection=connection, now=FIRST)
    before = read_all(client, pro)  # fills every copy
    page_before = client.get("/startups/acme").content.decode()
    first = "2026-11-15T12:00:00.000Z"
    assert set(before.values()) == {first, "stale"}
    assert "2026-11-15 12:00 UTC" in page_before and "status: stale" in page_before
    last_change, token = Change.objects.count(), readcache.read_tokens()["data"]

    revenue_sync(connection=connection, now=SECOND)

    assert Change.objects.count() == last_change  # nothing visible changed: no Change row
    assert readcache.read_tokens()["data"] == token  # and the copies' token stays
    after = read_all(client, pro)
    assert after == {
        **{name: "2026-11-18T12:00:00.000Z" for name in before},
        "detail_status": "ok",
    }
    page = client.get("/startups/acme").content.decode()
    assert "2026-11-18 12:00 UTC" in page and "status: ok" in page


def test_the_snake_case_rows_show_the_sync_time_too(client, pro, fake_providers):
    """The kept list rows as the serializer shapes them (snake_case: what the pages render)."""
    connection = stripe_connection(fake_providers)
    revenue_sync(connection=connection, now=FIRST)
    client.get("/api/v1/startups", **pro)  # keeps the rows
    revenue_sync(connection=connection, now=SECOND)
    page = pagecache.startup_page(filters=StartupFilters(), offset=0, limit=10)
    (row,) = StartupListSerializer(page.startups, many=True).data
    assert row["revenue"]["last_synced_at"] == "2026-11-18T12:00:00.000Z"


def test_the_copies_stay_across_such_a_sync(client, pro, fake_providers, django_assert_num_queries):
    """The profile is not rendered again nor its rows read again: one small query reads the
    sync times beside the copies, once per process per sync, and none while nothing synced."""
    connection = stripe_connection(fake_providers)
    revenue_sync(connection=connection, now=FIRST)
    read_all(client, pro)
    kept_profile, kept_rows = dict(PROFILES._entries), dict(pagecache.LIST_ROWS._entries)
    with django_assert_num_queries(1):  # the tokens only
        client.get("/api/v1/startups/acme", **pro)

    revenue_sync(connection=connection, now=SECOND)

    assert dict(PROFILES._entries) == kept_profile
    assert dict(pagecache.LIST_ROWS._entries) == kept_rows
    with django_assert_num_queries(2) as detail:  # the tokens, the sync time beside the copy
        client.get("/api/v1/startups/acme", **pro)
    assert "verified_at" in detail.captured_queries[1]["sql"]
    with django_assert_num_queries(1):  # the list row's sync time was read with it
        client.get("/api/v1/startups", **pro)
    with django_assert_num_queries(1):  # nothing synced since
        client.get("/api/v1/startups/acme", **pro)


def test_a_stamp_makes_every_server_read_that_startups_time_only(
    client, pro, django_assert_num_queries
):
    """Under the refresh worker (~11 stamps a second at 100,000 startups) the other startups'
    sync times stay kept: each process reads the stamps since its last once, then the stamped
    startup's time when it is served (core/beside.py). Before, every stamp made every request
    read its startups' times again."""
    acme, beta = make_startup("Acme", slug="acme", mrr=900), make_startup("Beta", slug="beta")
    make_verification(acme), make_verification(beta)
    verification_stamp(startup=beta, at=FIRST)  # the fresh token now names a sequence
    for slug in ("acme", "beta"):
        client.get(f"/api/v1/startups/{slug}", **pro)  # kept, with their sync times

    verification_stamp(startup=acme, at=SECOND)

    with django_assert_num_queries(2) as beta_read:  # the tokens, the stamps since
        beta_detail = client.get("/api/v1/startups/beta", **pro).json()["data"]
    assert "openstartup_freshstamp" in beta_read.captured_queries[1]["sql"]
    assert beta_detail["revenue"]["lastSyncedAt"] == "2026-11-15T12:00:00.000Z"
    with django_assert_num_queries(2) as acme_read:  # the tokens, acme's new sync time
        acme_detail = client.get("/api/v1/startups/acme", **pro).json()["data"]
    assert "verified_at" in acme_read.captured_queries[1]["sql"]
    assert acme_detail["revenue"]["lastSyncedAt"] == "2026-11-18T12:00:00.000Z"
