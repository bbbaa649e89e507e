"""Every REST surface labels where a startup's figures come from in
`revenue.source` (`verified`, `self_reported` or `demo`), never omitted: the list on each of
its paths (default order, another sort through the ranked raw-SQL page, cursor pages, the
rank index), the export, the change feed and the detail."""

import json

import pytest

from core import readcache
from startups.changes import CREATED, startup_change_record
from startups.models import Startup
from tests.support.factories import (
    bearer,
    make_pro_key,
    make_startup,
    make_verification,
)

pytestmark = pytest.mark.django_db

EXPECTED = {"demo-co": "demo", "stripe-co": "verified", "self-co": "self_reported"}


@pytest.fixture
def three(db):
    make_verification(make_startup(slug="demo-co", mrr=300), provider="demo")
    make_verification(make_startup(slug="stripe-co", mrr=200), provider="stripe")
    make_startup(slug="self-co", mrr=100)
    for startup in Startup.objects.all():
        startup_change_record(startup=startup, kind=CREATED)


@pytest.fixture
def pro(db) -> dict[str, str]:
    key, raw = make_pro_key()
    return bearer(raw)


def sources(items: list[dict]) -> dict[str, str]:
    return {item["slug"]: item["revenue"]["source"] for item in items}


@pytest.mark.parametrize("sort", ["mrr-desc", "name-asc", "growth-desc", "updated-desc"])
def test_list_items_say_verified_self_reported_or_demo_on_every_sort(client, three, sort):
    body = client.get("/api/v1/startups", {"sort": sort}).json()
    assert sources(body["data"]) == EXPECTED
    # Cursor pages (one item each) go through the "after" path of every sort.
    seen, cursor = [], None
    while True:
        query = {"sort": sort, "limit": 1} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/v1/startups", query).json()
        seen += page["data"]
        cursor = page["meta"].get("nextCursor")
        if not page["meta"].get("hasMore"):
            break
    assert sources(seen) == EXPECTED
    # The figures' label agrees with `verified`.
    for item in body["data"]:
        assert item["revenue"]["verified"] is (item["revenue"]["source"] != "self_reported")


@pytest.mark.parametrize("sort", ["mrr-desc", "name-asc"])
def test_the_read_cache_and_rank_index_keep_the_label(client, three, settings, sort):
    settings.READ_CACHE_SECONDS = 300
    settings.RANK_INDEX_INLINE_SECONDS = 60
    readcache.clear_local()
    try:
        for _ in range(2):  # filled, then served from the kept rows
            body = client.get("/api/v1/startups", {"sort": sort, "offset": 0}).json()
            assert sources(body["data"]) == EXPECTED
    finally:
        readcache.clear_local()


def test_export_rows_change_feed_entries_and_the_detail_carry_the_label(client, three, pro):
    lines = b"".join(
        client.get("/api/v1/exports/startups.ndjson", **pro).streaming_content
    ).splitlines()
    rows = [json.loads(line) for line in lines]
    assert sources([row for row in rows if "slug" in row]) == EXPECTED
    feed = client.get("/api/v1/changes", {"limit": 50}, **pro).json()["data"]
    assert sources([entry["startup"] for entry in feed if entry["startup"]]) == EXPECTED
    for slug, source in EXPECTED.items():
        detail = client.get(f"/api/v1/startups/{slug}").json()["data"]
        assert detail["revenue"]["source"] == source
