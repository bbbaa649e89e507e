"""GET /api/v1/startups and /api/v1/startups/{slug}, through the HTTP test client."""

import re
from datetime import date

import pytest

from startups.models import Startup
from tests.support.caches import DELIVERY_QUERIES, EXTRA_RESERVE_QUERIES, clear_caches
from tests.support.factories import make_founder, make_social, make_startup, make_verification

pytestmark = pytest.mark.django_db

LIST_ITEM_KEYS = {
    "name", "slug", "icon", "description", "website", "category", "founderName", "revenue",
    "onSale", "rank", "updatedAt", "profileUrl",
}  # fmt: skip
DETAIL_KEYS = {
    "name", "slug", "icon", "description", "website", "category", "businessType", "founded",
    "country", "teamSize", "founders", "technologies", "socials", "revenue", "verification",
    "providerAccount", "onSale", "askingPrice", "profileUrl",
}  # fmt: skip
VERIFICATION_KEYS = {
    "provider", "level", "verifiedAt", "currency", "mrr", "arr", "totalRevenue", "last30Days",
    "customers", "historyMonths", "monthly", "status", "lastSyncedAt", "methodology",
    "methodologyVersion", "credential", "providerReported",
}  # fmt: skip
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def get_list(client, **params):
    response = client.get("/api/v1/startups", params)
    assert response.status_code == 200, response.content
    return response.json()


def names(body) -> list[str]:
    return [item["name"] for item in body["data"]]


@pytest.fixture
def five():
    """Five startups: two share an MRR (tie), one has none."""
    return {
        "alpha": make_startup("Alpha", slug="alpha", mrr=500, category="Developer Tools"),
        "bravo": make_startup("Bravo", slug="bravo", mrr=3000, category="Marketing"),
        "charlie": make_startup("charlie", slug="charlie", mrr=None, category="Fintech"),
        "delta": make_startup(
            "Delta", slug="delta", mrr=1000, on_sale=True, asking_price=40000, category="AI"
        ),
        "echo": make_startup(
            "Echo", slug="echo", mrr=1000, description="Email for developer teams"
        ),
    }


# --- shapes -----------------------------------------------------------------------------------


def test_list_items_carry_every_documented_key_with_nulls_not_omissions(client):
    make_startup("Bare", slug="bare")
    body = get_list(client)
    (item,) = body["data"]
    assert set(item) == LIST_ITEM_KEYS
    assert item["icon"] is None and item["founderName"] is None
    assert item["revenue"] == {
        "mrr": None,
        "arr": None,
        "verified": False,
        "source": "self_reported",
        "lastSyncedAt": None,
        "growth30d": None,
    }
    assert item["rank"] is None
    # Attribution: the rules ask consumers to credit profileUrl wherever data is shown.
    assert item["profileUrl"] == "http://testserver/startups/bare"
    quota = body["meta"].pop("quota")
    assert body["meta"] == {
        "total": 1, "page": 1, "limit": 10, "hasMore": False, "plan": "Free", "maxLimit": 10,
        "nextCursor": None,
    }  # fmt: skip
    assert quota["limit"] == 100 and quota["used"] == 1 and quota["remaining"] == 99
    assert TIMESTAMP.match(quota["resetsAt"])


def test_detail_of_self_reported_startup_has_every_key_and_null_verification(client):
    startup = make_startup(
        "Solo", slug="solo", mrr=700, technologies=["Django"], founded=2021, country="Spain"
    )
    make_founder(startup, "Ada", title=None, twitter="https://x.com/ada")
    make_social(startup, "x", "https://x.com/solo")
    response = client.get("/api/v1/startups/solo")
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == DETAIL_KEYS
    assert data["revenue"] == {
        "mrr": 700,
        "arr": 8400,
        "currency": "USD",
        "verified": False,
        "source": "self_reported",
        "lastSyncedAt": None,
        "growth30d": None,
    }
    assert data["verification"] is None
    assert data["founders"] == [
        {"name": "Ada", "title": None, "twitter": "https://x.com/ada", "linkedin": None}
    ]
    assert data["socials"] == [{"platform": "x", "url": "https://x.com/solo"}]
    assert data["technologies"] == ["Django"]
    assert data["askingPrice"] is None and data["businessType"] is None
    assert data["profileUrl"] == "http://testserver/startups/solo"


def test_detail_of_verified_startup_shows_verification_with_monthly_rows_in_order(client):
    startup = make_startup("Paid", slug="paid", mrr=1200)
    make_verification(
        startup,
        mrr=1200,
        months=[(date(2026, 10, 1), 1300, 100), (date(2026, 9, 1), 1000, 0)],
        customers=31,
        last_30_days=1200,
    )
    data = client.get("/api/v1/startups/paid").json()["data"]
    assert data["revenue"]["verified"] is True
    verification = data["verification"]
    assert set(verification) == VERIFICATION_KEYS
    assert TIMESTAMP.match(verification["verifiedAt"])
    assert verification["verifiedAt"] == "2026-11-01T12:30:15.123Z"
    assert verification["monthly"] == [
        {"month": "2026-09", "gross": 1000, "refunds": 0, "net": 1000},
        {"month": "2026-10", "gross": 1300, "refunds": 100, "net": 1200},
    ]
    assert verification["historyMonths"] == 2
    assert verification["totalRevenue"] == 2200
    assert verification["customers"] == 31


def test_provider_without_subscription_data_has_null_mrr_but_total_revenue(client):
    startup = make_startup("Oneoff", slug="oneoff", mrr=None)
    make_verification(startup, provider="gumroad", mrr=None, months=[(date(2026, 10, 1), 900, 0)])
    data = client.get("/api/v1/startups/oneoff").json()["data"]
    assert data["verification"]["mrr"] is None
    assert data["verification"]["arr"] is None
    assert data["verification"]["totalRevenue"] == 900
    assert data["revenue"]["verified"] is True


def test_unpublished_startup_is_not_served(client):
    make_startup("Hidden", slug="hidden", is_published=False, mrr=5)
    assert get_list(client)["meta"]["total"] == 0
    assert client.get("/api/v1/startups/hidden").status_code == 404


# --- sorting and rank -------------------------------------------------------------------------


def test_default_sort_is_mrr_desc_ties_by_name_and_no_mrr_last(client, five):
    assert names(get_list(client)) == ["Bravo", "Delta", "Echo", "Alpha", "charlie"]


def test_mrr_asc_keeps_startups_without_mrr_last(client, five):
    assert names(get_list(client, sort="mrr-asc")) == ["Alpha", "Delta", "Echo", "Bravo", "charlie"]


def test_name_sorts_are_case_insensitive_and_put_no_mrr_last(client, five):
    five["charlie"].mrr = 1
    five["charlie"].save()
    assert names(get_list(client, sort="name-asc")) == [
        "Alpha",
        "Bravo",
        "charlie",
        "Delta",
        "Echo",
    ]
    assert names(get_list(client, sort="name-desc")) == [
        "Echo", "Delta", "charlie", "Bravo", "Alpha",
    ]  # fmt: skip


def test_name_sorts_put_startups_without_mrr_last(client, five):
    assert names(get_list(client, sort="name-asc"))[-1] == "charlie"
    assert names(get_list(client, sort="name-desc"))[-1] == "charlie"


def test_unknown_sort_falls_back_to_default(client, five):
    assert names(get_list(client, sort="bogus")) == names(get_list(client))


@pytest.mark.parametrize("sort", ["mrr-desc", "mrr-asc", "name-asc", "name-desc"])
def test_rank_is_position_by_mrr_whatever_the_sort(client, five, sort):
    ranks = {item["name"]: item["rank"] for item in get_list(client, sort=sort)["data"]}
    assert ranks == {"Bravo": 1, "Delta": 2, "Echo": 3, "Alpha": 4, "charlie": None}


@pytest.mark.parametrize("sort", ["mrr-desc", "mrr-asc", "name-asc", "name-desc"])
def test_rank_is_within_the_filtered_set(client, five, sort):
    body = get_list(client, sort=sort, maxMrr=1000)
    assert {item["name"]: item["rank"] for item in body["data"]} == {
        "Delta": 1, "Echo": 2, "Alpha": 3,
    }  # fmt: skip


@pytest.mark.parametrize("sort", ["mrr-desc", "mrr-asc", "name-asc", "name-desc"])
def test_paging_until_has_more_is_false_sees_everything_once_with_consistent_ranks(client, sort):
    for i in range(23):
        make_startup(f"Co {i:02d}", slug=f"co-{i:02d}", mrr=None if i % 7 == 0 else (i % 5) * 100)
    seen, page = [], 1
    while True:
        body = get_list(client, sort=sort, limit=4, page=page)
        seen += body["data"]
        if not body["meta"]["hasMore"]:
            break
        page += 1
    assert page == 6
    assert len(seen) == 23 == len({item["slug"] for item in seen})
    ranked = sorted((item for item in seen if item["rank"]), key=lambda item: item["rank"])
    assert [item["rank"] for item in ranked] == list(range(1, len(ranked) + 1))
    mrrs = [item["revenue"]["mrr"] for item in ranked]
    assert mrrs == sorted(mrrs, reverse=True)
    assert all(item["rank"] is None for item in seen if item["revenue"]["mrr"] is None)


# --- filters ----------------------------------------------------------------------------------


def test_q_matches_name_category_and_description(client, five):
    assert names(get_list(client, q="alph")) == ["Alpha"]
    assert names(get_list(client, q="marketing")) == ["Bravo"]
    assert names(get_list(client, q="DEVELOPER")) == ["Echo", "Alpha"]


def test_category_is_a_partial_case_insensitive_match(client, five):
    assert names(get_list(client, category="tools")) == ["Alpha"]
    assert names(get_list(client, category="FINtech")) == ["charlie"]


def test_like_metacharacters_in_search_are_literal(client, five):
    make_startup("100% Uptime_Co", slug="uptime", mrr=1)
    assert names(get_list(client, q="100%")) == ["100% Uptime_Co"]
    assert names(get_list(client, q="_")) == ["100% Uptime_Co"]
    assert names(get_list(client, q="%")) == ["100% Uptime_Co"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", {"Delta"}), ("false", {"Alpha", "Bravo", "charlie", "Echo"}), ("yes", None)],
)
def test_on_sale_filter(client, five, value, expected):
    got = set(names(get_list(client, onSale=value)))
    assert got == (expected or set(five_names()))


def five_names() -> list[str]:
    return ["Alpha", "Bravo", "charlie", "Delta", "Echo"]


def test_mrr_bounds_are_inclusive_and_exclude_startups_without_mrr(client, five):
    assert names(get_list(client, minMrr=1000)) == ["Bravo", "Delta", "Echo"]
    assert names(get_list(client, maxMrr=1000)) == ["Delta", "Echo", "Alpha"]
    assert names(get_list(client, minMrr=1000, maxMrr=1000)) == ["Delta", "Echo"]


@pytest.mark.parametrize("garbage", ["abc", "", "NaN", "Infinity", "1e999"])
def test_unparseable_mrr_bounds_are_ignored(client, five, garbage):
    assert get_list(client, minMrr=garbage)["meta"]["total"] == 5
    assert get_list(client, maxMrr=garbage)["meta"]["total"] == 5


def test_huge_mrr_bounds_are_clamped_not_ignored(client, five):
    assert get_list(client, minMrr="9" * 40)["data"] == []
    assert get_list(client, maxMrr="9" * 40)["meta"]["total"] == 4  # all with an MRR


def test_filters_combine(client, five):
    body = get_list(client, q="e", minMrr=900, onSale="false", sort="name-asc")
    assert names(body) == ["Bravo", "Echo"]
    assert [item["rank"] for item in body["data"]] == [1, 2]


# --- limit and page clamping --------------------------------------------------------------------


@pytest.fixture
def twelve():
    for i in range(12):
        make_startup(f"S{i:02d}", slug=f"s{i:02d}", mrr=i + 1)


@pytest.mark.parametrize(("raw", "applied"), [("0", 1), ("-3", 1), ("abc", 10), ("4", 4)])
def test_limit_is_clamped_without_notice(client, twelve, raw, applied):
    body = get_list(client, limit=raw)
    assert body["meta"]["limit"] == applied
    assert len(body["data"]) == applied
    assert "notice" not in body["meta"]


def test_limit_above_plan_maximum_gives_the_maximum_and_a_notice(client, twelve):
    body = get_list(client, limit=1000)
    assert body["meta"]["limit"] == 10
    assert len(body["data"]) == 10
    assert "Free" in body["meta"]["notice"] and "10" in body["meta"]["notice"]


@pytest.mark.parametrize("raw", ["-1", "0", "abc", ""])
def test_bad_page_gives_page_one(client, twelve, raw):
    body = get_list(client, page=raw)
    assert body["meta"]["page"] == 1
    assert names(body) == names(get_list(client))


def test_page_past_the_end_is_empty_not_an_error(client, twelve):
    body = get_list(client, page=99999999999999999999)
    assert body["data"] == []
    assert body["meta"]["hasMore"] is False
    assert body["meta"]["total"] == 12


def test_second_page_and_has_more(client, twelve):
    first, second = get_list(client, page=1), get_list(client, page=2)
    assert first["meta"]["hasMore"] is True and second["meta"]["hasMore"] is False
    assert names(second) == ["S01", "S00"]
    assert [item["rank"] for item in second["data"]] == [11, 12]


def test_list_runs_a_fixed_number_of_queries(client, twelve, django_assert_num_queries, settings):
    settings.READ_CACHE_SECONDS = 0  # the database path (per-process copies: test_readcache)
    client.get("/api/v1/startups", {"limit": 1})  # this month's usage row now exists
    for limit in (1, 10):
        clear_caches()
        # Reserve (one UPDATE with its hold, returning the usage figures for the headers),
        # count, page and, on SQLite once the answer is written, the delivery confirmation
        # (records never delivered are never charged; on PostgreSQL the next charge carries
        # it): whatever the size.
        extra = DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES
        with django_assert_num_queries(3 + extra):
            client.get("/api/v1/startups", {"limit": limit})
        with django_assert_num_queries(3 + extra):  # the page query carries the rank window
            client.get("/api/v1/startups", {"limit": limit, "sort": "name-asc"})
        # Again within LIST_CACHE_SECONDS: total, page and ranks come from the cache; the rows
        # are read fresh by primary key.
        with django_assert_num_queries(2 + extra):
            client.get("/api/v1/startups", {"limit": limit})
        with django_assert_num_queries(2 + extra):
            client.get("/api/v1/startups", {"limit": limit, "sort": "name-asc"})


def test_without_copies_a_cached_page_still_shows_fresh_rows(client, twelve, settings):
    # Rows are re-read by id under a cached skeleton; with per-process copies on, a write
    # shows through the generation token instead (tests/system/test_readcache.py).
    settings.READ_CACHE_SECONDS = 0
    first = client.get("/api/v1/startups", {"limit": 2}).json()["data"][0]
    Startup.objects.filter(slug=first["slug"]).update(description="Changed just now")
    again = client.get("/api/v1/startups", {"limit": 2}).json()["data"][0]
    assert (again["slug"], again["description"]) == (first["slug"], "Changed just now")


def test_the_list_cache_can_be_turned_off(client, twelve, settings, django_assert_num_queries):
    settings.LIST_CACHE_SECONDS = 0
    settings.READ_CACHE_SECONDS = 0  # the database path (per-process copies: test_readcache)
    client.get("/api/v1/startups", {"limit": 1})
    for _ in range(2):
        with django_assert_num_queries(3 + DELIVERY_QUERIES + EXTRA_RESERVE_QUERIES):
            client.get("/api/v1/startups", {"limit": 1})


# --- detail and errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("/api/v1/startups/nope", "nope"),
        ("/api/v1/startups/with%20space", "with space"),
        ("/api/v1/startups/%C3%BCml%C3%A4ut", "ümläut"),
        ("/api/v1/startups/100%25", "100%"),
        ("/api/v1/startups/a/b", "a/b"),
        ("/api/v1/startups/a%0Ab", "a\nb"),
    ],
)
def test_unknown_slug_is_a_json_404_naming_the_slug(client, path, slug):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {
            "code": "not_found",
            "message": f"No startup with slug '{slug}'",
            "requestId": response["X-Request-Id"],
        }
    }


def test_unicode_slug_is_served(client):
    make_startup("Über", slug="über", mrr=3)
    response = client.get("/api/v1/startups/%C3%BCber")
    assert response.status_code == 200
    assert response.json()["data"]["slug"] == "über"


def test_unknown_api_path_is_a_json_404(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_wrong_method_is_a_json_405(client):
    response = client.post("/api/v1/startups", {})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["Cache-Control"] == "private, no-store"


def test_server_failure_under_api_is_a_json_500(client, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("restapi.views.startup_page", explode)
    client.raise_request_exception = False
    response = client.get("/api/v1/startups")
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "code": "server_error",
            "message": "Server-side failure; retry later.",
            "requestId": response["X-Request-Id"],
        }
    }
    assert response["Access-Control-Allow-Origin"] == "*"


# --- conventions ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/startups", "/api/v1/startups/nope", "/api/v1/x"])
def test_every_rest_answer_allows_any_origin_and_is_not_cacheable(client, path):
    response = client.get(path, headers={"Origin": "https://example.org"})
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Cache-Control"] == "private, no-store"
    assert client.get(path)["Access-Control-Allow-Origin"] == "*"


def test_cors_preflight_is_answered(client):
    response = client.options(
        "/api/v1/startups",
        headers={
            "Origin": "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization, x-api-key",
        },
    )
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    allowed = response["Access-Control-Allow-Headers"].lower()
    assert "authorization" in allowed and "x-api-key" in allowed


def test_money_is_whole_dollars(client):
    make_startup("Big", slug="big", mrr=123456, on_sale=True, asking_price=9000000)
    item = get_list(client)["data"][0]
    assert item["revenue"]["mrr"] == 123456 and item["revenue"]["arr"] == 1481472
    detail = client.get("/api/v1/startups/big").json()["data"]
    assert isinstance(detail["askingPrice"], int)


# --- the site's session stays the site's ------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/startups", "/api/ai/discovery", "/api/v1/nowhere"])
def test_api_answers_never_clear_or_vary_on_the_sites_session_cookie(client, path):
    """The API authenticates by key only: its answers never set, clear or vary on the site's
    session cookie, so a browser calling it from this site's pages keeps its cookie, and a
    cache in between need not split API answers by cookie. The site's pages still manage it."""
    client.cookies["sessionid"] = "x"  # not a session key Django could have issued
    response = client.get(path)
    assert "sessionid" not in response.cookies
    assert "Cookie" not in response.get("Vary", "")
    page = client.get("/startups/")
    assert page.status_code == 200
    assert page.cookies["sessionid"].value == ""  # the unusable cookie is cleared
