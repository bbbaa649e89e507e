"""Link headers, cursor paging, lookups, categories, the change feed and
the NDJSON export, through the HTTP test client."""

import gzip
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from restapi.fieldsets import field_names
from startups.models import Startup
from startups.serializers import StartupListSerializer
from tests.support.factories import (
    bearer,
    make_account,
    make_api_key,
    make_founder,
    make_startup,
    make_subscription,
)

pytestmark = pytest.mark.django_db


def pro_headers() -> dict:
    account = make_account()
    make_subscription(account=account)
    return bearer(make_api_key(account=account)[1])


def links(response) -> dict[str, str]:
    """rel -> URL path and query of an RFC 8288 Link header."""
    found = {}
    for part in response["Link"].split(","):
        url, rel = part.split(";")
        found[rel.strip().removeprefix('rel="').removesuffix('"')] = url.strip()[1:-1]
    return {rel: url.split("://", 1)[1].split("/", 1)[1] for rel, url in found.items()}


def slugs(body) -> list[str]:
    return [item["slug"] for item in body["data"]]


@pytest.fixture
def twelve():
    return [make_startup(f"S{n:02d}", slug=f"s{n:02d}", mrr=1000 - n) for n in range(12)]


# --- Link headers -----------------------------------------------------------------------------


def test_page_links_name_first_prev_and_next(client, twelve):
    first = client.get("/api/v1/startups?limit=5&sort=name-asc")
    assert links(first) == {
        "first": "api/v1/startups?limit=5&sort=name-asc",
        "next": "api/v1/startups?limit=5&sort=name-asc&page=2",
    }
    middle = client.get("/api/v1/startups?limit=5&sort=name-asc&page=2")
    assert set(links(middle)) == {"first", "prev", "next"}
    assert links(middle)["prev"].endswith("page=1")
    last = client.get("/" + links(middle)["next"])
    assert slugs(last.json()) == ["s10", "s11"]
    assert set(links(last)) == {"first", "prev"}


def test_following_next_links_by_cursor_sees_every_startup_once(client, twelve):
    seen, path = [], "/api/v1/startups?limit=5"
    body = client.get(path).json()
    seen += slugs(body)
    cursor = body["meta"]["nextCursor"]
    while cursor:
        response = client.get("/api/v1/startups", {"limit": 5, "cursor": cursor})
        body = response.json()
        assert body["meta"]["page"] is None
        seen += slugs(body)
        cursor = body["meta"]["nextCursor"]
        assert ("next" in links(response)) == (cursor is not None) == body["meta"]["hasMore"]
    assert seen == [f"s{n:02d}" for n in range(12)]


def test_a_cursor_walk_by_growth_visits_every_startup_once_in_growth_order(client):
    # Growth high to low, ties by name, startups without growth last (sort=growth-desc).
    growths = [0.5, 0.25, 0.25, None, -0.1, 0.25, None, 1.0, 0.0]
    for n, growth in enumerate(growths):
        make_startup(f"G{n}", slug=f"g{n}", mrr=100 + n, growth_30d=growth)
    expected = ["g7", "g0", "g1", "g2", "g5", "g8", "g4", "g3", "g6"]
    seen, params = [], {"limit": 2, "sort": "growth-desc"}
    body = client.get("/api/v1/startups", params).json()
    seen += slugs(body)
    while body["meta"]["nextCursor"]:
        body = client.get(
            "/api/v1/startups", {**params, "cursor": body["meta"]["nextCursor"]}
        ).json()
        seen += slugs(body)
    assert seen == expected


# --- cursor paging ----------------------------------------------------------------------------

WALK_SIZE = 2500  # stands for a catalogue of 100,000: a few thousand keep the suite fast


@pytest.mark.parametrize("sort", ["mrr-desc", "name-desc", "updated-desc"])
def test_a_cursor_walk_with_writes_in_between_has_no_duplicates_and_no_gaps(client, sort):
    """Thousands of startups walked 50 at a time while rows are inserted before the cursor
    and others jump ahead of it: every unchanged row exactly once, nothing twice."""
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    Startup.objects.bulk_create(
        Startup(
            name=f"Walk {n:05d}",
            slug=f"walk-{n:05d}",
            mrr=None if n % 7 == 0 else (n * 37) % 5000,
            updated_at=moment - timedelta(seconds=n // 3),
        )
        for n in range(WALK_SIZE)
    )
    headers = pro_headers()
    seen: list[str] = []
    changed: set[str] = set()
    cursor, requests = None, 0
    while True:
        params = {"limit": 50, "sort": sort, **({"cursor": cursor} if cursor else {})}
        body = client.get("/api/v1/startups", params, **headers).json()
        seen += slugs(body)
        requests += 1
        cursor = body["meta"]["nextCursor"]
        if not cursor:
            break
        # Writes between requests: a new startup at the top of every order, and a row not
        # yet seen made to jump ahead of the cursor (a rank change).
        make_startup(f"ZZ new {requests}", slug=f"new-{requests}", mrr=10**9)
        mover = Startup.objects.exclude(slug__in=seen).exclude(slug__in=changed).last()
        if mover is not None:
            Startup.objects.filter(pk=mover.pk).update(
                mrr=10**9, name="AAA " + mover.name, updated_at=moment + timedelta(days=1)
            )
            changed.add(mover.slug)
    assert len(seen) == len(set(seen)), "a startup came twice"
    unchanged = {f"walk-{n:05d}" for n in range(WALK_SIZE)} - changed
    assert unchanged <= set(seen), f"{len(unchanged - set(seen))} unchanged startups skipped"
    assert requests >= WALK_SIZE // 50


def test_cursor_pages_seek_instead_of_scanning_an_offset(client, twelve):
    body = client.get("/api/v1/startups?limit=3").json()
    with CaptureQueriesContext(connection) as queries:
        deeper = client.get("/api/v1/startups", {"limit": 3, "cursor": body["meta"]["nextCursor"]})
    assert slugs(deeper.json()) == ["s03", "s04", "s05"]
    assert not any("OFFSET" in query["sql"].upper() for query in queries.captured_queries)


def test_cursor_pages_keep_rank_by_mrr_within_the_filtered_set(client, twelve):
    make_startup("No revenue", slug="zero", mrr=None)
    body = client.get("/api/v1/startups?limit=4&sort=name-desc").json()
    rest = client.get(
        "/api/v1/startups", {"limit": 20, "cursor": body["meta"]["nextCursor"]}
    ).json()
    items = body["data"] + rest["data"]
    assert [item["slug"] for item in items] == [f"s{n:02d}" for n in range(11, -1, -1)] + ["zero"]
    assert [item["rank"] for item in items] == [*range(12, 0, -1), None]
    assert rest["meta"]["total"] == 13


def test_a_cursor_keeps_its_sort_and_a_bad_cursor_is_refused(client, twelve):
    body = client.get("/api/v1/startups?limit=2&sort=name-desc").json()
    cursor = body["meta"]["nextCursor"]
    mixed = client.get("/api/v1/startups", {"cursor": cursor, "sort": "mrr-asc", "page": 3})
    assert slugs(mixed.json())[:2] == ["s09", "s08"]
    assert len(mixed.json()["meta"]["warnings"]) == 2
    # A cursor is a token, not a filter: one the server did not issue is refused (a sync loop
    # that silently started over at page 1 would re-read everything or never end).
    bad = client.get("/api/v1/startups", {"cursor": "not-a-cursor", "limit": 2})
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_cursor"
    # The other parameters stay lenient: garbage there is ignored with a warning.
    lenient = client.get("/api/v1/startups", {"cursor": cursor, "limit": "x", "sort": "?"})
    assert lenient.status_code == 200 and slugs(lenient.json())[0] == "s09"


# --- lookups ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "asked", ["acme.com", "ACME.com", "https://www.acme.com/", "www.acme.com/about?x=1"]
)
def test_website_finds_a_startup_by_its_domain(client, asked):
    make_startup("Acme", slug="acme", website="https://www.acme.com/pricing")
    make_startup("Acme app", slug="acme-app", website="http://app.acme.com")
    make_startup("Not acme", slug="notacme", website="https://notacme.com")
    make_startup("Lookalike", slug="lookalike", website="https://acme.com.evil.example/acme.com")
    make_startup("Nowhere", slug="nowhere", website=None)
    body = client.get("/api/v1/startups", {"website": asked, "sort": "name-asc"}).json()
    assert slugs(body) == ["acme", "acme-app"]


def test_a_website_that_is_no_domain_is_ignored_with_a_warning(client, twelve):
    body = client.get("/api/v1/startups", {"website": "not a domain"}).json()
    assert body["meta"]["total"] == 12
    assert any("website" in warning for warning in body["meta"]["warnings"])


def test_country_filter(client):
    make_startup("Berlin", slug="berlin", country="Germany")
    make_startup("Paris", slug="paris", country="France")
    body = client.get("/api/v1/startups", {"country": "germany"}).json()
    assert slugs(body) == ["berlin"]


def test_sparse_fieldsets_on_list_and_detail(client, twelve):
    make_founder(twelve[0], "Ada")
    body = client.get("/api/v1/startups?limit=2&fields=name,slug,revenue.mrr,nope").json()
    assert body["data"] == [
        {"name": "S00", "slug": "s00", "revenue": {"mrr": 1000}},
        {"name": "S01", "slug": "s01", "revenue": {"mrr": 999}},
    ]
    assert any("'nope'" in warning for warning in body["meta"]["warnings"])
    detail = client.get("/api/v1/startups/s00?fields=name,founders,verification.mrr").json()
    assert detail["data"]["name"] == "S00"
    assert set(detail["data"]) == {"name", "founders", "verification"}
    assert detail["data"]["founders"][0]["name"] == "Ada"
    assert detail["data"]["verification"] is None


def test_a_long_fieldset_within_the_documented_length_is_read_whole(client, twelve):
    # The document allows `fields` up to 500 characters: every name, spaced and said twice
    # (as a client assembling it from parts may), is about 360 of them.
    names = sorted(field_names(StartupListSerializer))
    wanted = ", ".join(names * 2)
    assert 200 < len(wanted) <= 500, len(wanted)
    body = client.get("/api/v1/startups", {"limit": 1, "fields": wanted}).json()
    assert body["meta"].get("warnings") in (None, [])
    assert set(body["data"][0]) == {name.split(".")[0] for name in names}


def test_categories_with_counts_spend_nothing(client):
    make_startup("A", slug="a", category="AI")
    make_startup("B", slug="b", category="AI")
    make_startup("C", slug="c", category="Fintech")
    make_startup("D", slug="d", category=None)
    make_startup("E", slug="e", category="AI", is_published=False)
    response = client.get("/api/v1/categories")
    assert response.status_code == 200
    assert response.json() == {
        "data": [{"name": "AI", "count": 2}, {"name": "Fintech", "count": 1}]
    }
    assert response["X-Service-Quota-Remaining"] == "100"


def test_change_feed_by_updated_since_and_updated_desc(client, twelve):
    base = datetime(2026, 6, 1, tzinfo=UTC)
    for n, startup in enumerate(twelve):
        Startup.objects.filter(pk=startup.pk).update(updated_at=base + timedelta(hours=n))
    body = client.get(
        "/api/v1/startups",
        {"updatedSince": "2026-06-01T09:00:00Z", "sort": "updated-desc"},
    ).json()
    assert slugs(body) == ["s11", "s10", "s09"]
    assert body["data"][0]["updatedAt"] == "2026-06-01T11:00:00.000Z"
    assert [item["rank"] for item in body["data"]] == [3, 2, 1]  # rank is still by MRR
    assert "warnings" not in body["meta"]


# --- NDJSON export ------------------------------------------------------------------------------


def export_lines(response) -> list[dict]:
    raw = b"".join(response.streaming_content)
    if response.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode().splitlines()]


@pytest.mark.parametrize("headers", [{}, "free"])
def test_the_export_is_pro_only(client, headers):
    if headers == "free":
        headers = bearer(make_api_key()[1])
    response = client.get("/api/v1/exports/startups.ndjson", **headers)
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "pro_required"
    assert "Pro plan" in error["message"]


def test_the_export_streams_every_filtered_startup_then_the_count(client):
    Startup.objects.bulk_create(
        Startup(name=f"E{n:03d}", slug=f"e{n:03d}", mrr=n or None, category="AI" if n % 2 else "X")
        for n in range(240)
    )
    response = client.get(
        "/api/v1/exports/startups.ndjson?category=AI&sort=name-asc&bogus=1", **pro_headers()
    )
    assert response.status_code == 200
    assert response.streaming and "Content-Length" not in response
    assert response["Content-Type"] == "application/x-ndjson"
    *items, trailer = export_lines(response)
    assert [item["slug"] for item in items] == [f"e{n:03d}" for n in range(1, 240, 2)]
    assert trailer["meta"]["count"] == 120
    assert any("bogus" in warning for warning in trailer["meta"]["warnings"])
    # rank: position by MRR within the filtered set (e239 has the most).
    assert items[-1]["rank"] == 1 and items[0]["rank"] == 120
    assert set(items[0]) >= {"name", "slug", "revenue", "rank", "updatedAt", "profileUrl"}
    assert items[0]["profileUrl"] == "http://testserver/startups/e001"


def test_the_export_is_gzipped_when_asked(client):
    for n in range(30):
        make_startup(f"G{n}", slug=f"g{n}", mrr=n)
    headers = pro_headers()
    plain = export_lines(client.get("/api/v1/exports/startups.ndjson", **headers))
    response = client.get(
        "/api/v1/exports/startups.ndjson?fields=slug",
        headers={"Accept-Encoding": "br;q=1, gzip;q=0.8"},
        **headers,
    )
    assert response["Content-Encoding"] == "gzip"
    zipped = export_lines(response)
    assert [line.get("slug") for line in zipped[:-1]] == [line["slug"] for line in plain[:-1]]
    assert set(zipped[0]) == {"slug"}
    assert zipped[-1] == {"meta": {"count": 30}}
    refused = client.get(
        "/api/v1/exports/startups.ndjson", headers={"Accept-Encoding": "gzip;q=0"}, **headers
    )
    assert "Content-Encoding" not in refused


def test_the_export_reads_in_batches_that_join_up_exactly(twelve):
    from startups.selectors import StartupFilters, startup_export

    make_startup("No revenue", slug="zero", mrr=None)
    for sort in ("mrr-desc", "name-asc", "updated-desc"):
        filters = StartupFilters(sort=sort)
        whole = [(s.slug, s.rank) for s in startup_export(filters=filters, chunk_size=100)]
        batched = [(s.slug, s.rank) for s in startup_export(filters=filters, chunk_size=5)]
        assert batched == whole and len(whole) == 13
        assert sorted(rank for _, rank in whole if rank) == list(range(1, 13))


def test_the_guide_shows_cursor_paging_and_exports(client):
    html = client.get("/docs/guide/").content.decode()
    for words in ("meta.nextCursor", "cursor=", "exports/startups.ndjson", "pro_required", "Link"):
        assert words in html


def test_filters_no_row_can_meet_give_empty_answers_not_errors(client, twelve):
    """Found by schemathesis: a negative maxMrr made the ranked query refuse to compile."""
    query = {"maxMrr": "-5", "sort": "name-desc"}
    first = client.get("/api/v1/startups", {**query, "limit": 2}).json()
    assert first["data"] == [] and first["meta"]["nextCursor"] is None
    cursor = client.get("/api/v1/startups?limit=2&sort=name-desc").json()["meta"]["nextCursor"]
    paged = client.get("/api/v1/startups", {**query, "cursor": cursor})
    assert paged.status_code == 200 and paged.json()["data"] == []
    export = client.get("/api/v1/exports/startups.ndjson", query, **pro_headers())
    assert export_lines(export) == [{"meta": {"count": 0}}]


def _export_peak_bytes(client, headers: dict) -> tuple[int, int]:
    """(lines read, peak bytes allocated) while reading the export chunk by chunk."""
    import tracemalloc

    response = client.get("/api/v1/exports/startups.ndjson", **headers)
    tracemalloc.start()
    try:
        lines = sum(chunk.count(b"\n") for chunk in response.streaming_content)
        return lines, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_export_streams_in_constant_memory(client):
    headers = pro_headers()

    def grow_to(size: int) -> None:
        start = Startup.objects.count()
        Startup.objects.bulk_create(
            Startup(name=f"M{n:05d}", slug=f"m{n:05d}", mrr=n, description="x" * 200)
            for n in range(start, size)
        )

    grow_to(1500)
    small_lines, small_peak = _export_peak_bytes(client, headers)
    grow_to(6000)
    large_lines, large_peak = _export_peak_bytes(client, headers)
    assert (small_lines, large_lines) == (1501, 6001)
    # Four times the rows, about the same memory: one batch at a time, never the whole set.
    assert large_peak < small_peak * 1.5, (small_peak, large_peak)


def test_cursors_of_the_longest_unicode_names_and_slugs_still_work(client):
    for letter in "αβγ":
        make_startup(letter * 200, slug=letter * 200, mrr=7)
    seen, cursor = [], None
    for _ in range(5):
        params = {"limit": 1, "sort": "name-asc", **({"cursor": cursor} if cursor else {})}
        body = client.get("/api/v1/startups", params).json()
        assert "warnings" not in body["meta"]
        seen += slugs(body)
        if not (cursor := body["meta"]["nextCursor"]):
            break
    assert seen == ["α" * 200, "β" * 200, "γ" * 200]


def test_cursor_pages_run_a_fixed_number_of_queries(
    client, twelve, django_assert_num_queries, settings
):
    from tests.support.caches import DELIVERY_QUERIES, EXTRA_RESERVE_QUERIES, clear_caches

    settings.READ_CACHE_SECONDS = 0
    for sort in ("mrr-desc", "name-asc"):
        first = client.get("/api/v1/startups", {"limit": 2, "sort": sort}).json()
        for limit in (1, 10):
            clear_caches()
            # As a page by number (test_rest_api): reserve with its hold (and the usage
            # figures), count, the page after the cursor with its ranks, the delivery
            # confirmation (SQLite; on PostgreSQL the next charge carries it).
            with django_assert_num_queries(3 + DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES):
                client.get(
                    "/api/v1/startups", {"limit": limit, "cursor": first["meta"]["nextCursor"]}
                )
