"""The rank index (startups/rankindex.py) gives the same answers as the database.

Totals and ranks that the index computes by binary search are compared, on random filters,
sorts, pages and cursors, with the plain SQL selector (`startups.selectors.startup_page`): the
same ids in the same order, the same ranks, the same total and the same "more" flag. Then the
read path is checked to use it (no COUNT query) and to follow writes at once.
"""

import random
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from openstartup import readcache
from startups import rankindex, selectors
from startups.models import Startup
from startups.selectors import SORT_ORDERS, StartupFilters, after_of
from tests.factories import make_api_key, make_startup, make_subscription

CATEGORIES = ["Developer Tools", "Design Tools", "Marketing", "E-commerce", "100% Organic", None]
# Few distinct MRR values: many ties, broken by name (case-insensitively) then slug.
MRRS = [None, 0, 1, 5, 5, 10, 99, 100, 100, 1000, 25000]
NAMES = ["alpha", "Alpha", "beta", "Gamma", "gamma", "delta", "Émile", "zeta", "Ärger", "eta"]
TERMS = ["tools", "TOOLS", "design", "market", "e-", "%", "_", "100%", "zzz", "o", ""]


@pytest.fixture(autouse=True)
def read_cache_on(settings):
    settings.READ_CACHE_SECONDS = 300
    settings.RANK_INDEX_INLINE_SECONDS = 60
    readcache.clear_local()
    yield
    readcache.clear_local()


def dataset(rng: random.Random, count: int = 120) -> None:
    for n in range(count):
        make_startup(
            f"{rng.choice(NAMES)} {rng.randrange(3)}",
            slug=f"s-{n:03d}-{rng.randrange(1000)}",
            mrr=rng.choice(MRRS),
            category=rng.choice(CATEGORIES),
            is_published=rng.random() > 0.1,
        )


def random_filters(rng: random.Random) -> StartupFilters:
    bound = [None, None, -1, 0, 1, 5, 6, 100, 999, 1000, 10**9]
    return StartupFilters(
        min_mrr=rng.choice(bound),
        max_mrr=rng.choice(bound),
        category=rng.choice([None, None, *TERMS]),
        q=rng.choice([None, None, None, "alpha", "ALPHA", "mile", "ä", "tools", "0", "%", ""]),
        sort=rng.choice(list(SORT_ORDERS)),
    )


def summary(page: selectors.StartupPage) -> tuple:
    return ([(s.slug, s.rank) for s in page.startups], page.total, page.more)


@pytest.mark.django_db
def test_random_pages_match_the_database_exactly():
    rng = random.Random(19)
    dataset(rng)
    token = readcache.current("data")
    index = rankindex.build(db="default")
    assert len(index.ids) == Startup.objects.filter(is_published=True).count()
    everyone = list(Startup.objects.filter(is_published=True))
    checked = 0
    for _ in range(800):
        filters = random_filters(rng)
        assert rankindex.answers(filters)
        limit = rng.choice([0, 1, 3, 10, 25])
        after = None
        if rng.random() < 0.3:
            after = after_of(rng.choice(everyone), filters.sort)
        offset = 0 if after else rng.choice([0, 0, 3, 10, 40, 200])
        kwargs = dict(filters=filters, offset=offset, limit=limit, after=after)
        from_index = readcache._page_from_index(index, token, **kwargs)
        from_sql = selectors.startup_page(**kwargs)
        if filters.q and filters.category:  # both at once: the SQL path answers
            assert from_index is None
            continue
        assert from_index is not None
        assert summary(from_index) == summary(from_sql), kwargs
        checked += bool(from_sql.startups)
    assert checked > 100  # many trials compared real pages, not empty ones


@pytest.mark.django_db
def test_filters_the_index_does_not_hold_go_to_sql():
    for filters in (
        StartupFilters(on_sale=True),
        StartupFilters(verified=False),
        StartupFilters(country="Germany"),
        StartupFilters(website="acme.com"),
    ):
        assert not rankindex.answers(filters)
    assert rankindex.answers(StartupFilters(website="", country="", min_mrr=5, sort="name-asc"))


def list_page(client, key: str, query: str = "") -> dict:
    response = client.get(f"/api/v1/startups{query}", HTTP_X_API_KEY=key)
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def pro_key(db) -> str:
    key, raw = make_api_key()
    make_subscription(account=key.account)
    return raw


@pytest.mark.parametrize(
    "query",
    ["?minMrr=50", "?sort=name-asc&category=tools&page=2&limit=3", "?q=alpha&sort=mrr-asc"],
)
def test_the_list_counts_and_ranks_without_a_count_query(client, pro_key, settings, query):
    settings.LIST_CACHE_SECONDS = 0  # every request builds its page
    dataset(random.Random(7))
    list_page(client, pro_key, query)  # builds the index (and the term's places)
    with CaptureQueriesContext(connection) as queries:
        body = list_page(client, pro_key, query)
    sql = " ".join(q["sql"].upper() for q in queries.captured_queries)
    assert "COUNT(" not in sql and "ROW_NUMBER" not in sql
    readcache.clear_local()
    settings.READ_CACHE_SECONDS = 0  # the plain SQL path
    assert list_page(client, pro_key, query) == body


def test_a_write_shows_in_totals_and_ranks_at_once(client, pro_key, settings):
    settings.LIST_CACHE_SECONDS = 0
    dataset(random.Random(3), count=30)
    before = list_page(client, pro_key, "?minMrr=1")
    make_startup("Top of the list", slug="top", mrr=10**9)
    after = list_page(client, pro_key, "?minMrr=1")
    assert after["meta"]["total"] == before["meta"]["total"] + 1
    assert after["data"][0]["slug"] == "top" and after["data"][0]["rank"] == 1
    assert after["data"][1]["slug"] == before["data"][0]["slug"]
    assert after["data"][1]["rank"] == 2


@pytest.mark.parametrize("why", ["a large dataset", "a slow last build"])
@pytest.mark.django_db(transaction=True)
def test_a_slow_build_runs_in_the_background_while_sql_answers(settings, why):
    settings.RANK_INDEX_REBUILD_SECONDS = 0
    dataset(random.Random(5), count=40)
    filters = StartupFilters(min_mrr=1)
    copy = readcache.RANK_INDEX
    if why == "a large dataset":
        settings.RANK_INDEX_INLINE_STARTUPS = 10  # 40 startups are "large": no inline build
    else:
        settings.RANK_INDEX_INLINE_SECONDS = -1  # every build counts as slow
        copy.build_seconds = 1.0  # as after a slow build
    assert copy.current() is None  # stale: the SQL path answers while a thread builds
    for _ in range(200):
        if copy.index is not None and not copy.building:
            break
        time.sleep(0.05)
    built = copy.current()
    assert built is not None
    token, index = built
    expected = selectors.startup_page(filters=filters, offset=0, limit=10)
    from_index = readcache._page_from_index(
        index, token, filters=filters, offset=0, limit=10, after=None
    )
    assert summary(from_index) == summary(expected)


@pytest.mark.django_db(transaction=True)
def test_a_large_dataset_fetches_a_new_term_in_the_background(settings):
    settings.RANK_INDEX_INLINE_STARTUPS = 10  # 40 startups are "large"
    settings.RANK_INDEX_REBUILD_SECONDS = 0
    dataset(random.Random(11), count=40)
    filters = StartupFilters(q="alpha", sort="name-asc")
    copy = readcache.RANK_INDEX
    for _ in range(200):  # the first build, in the background
        if (built := copy.current()) is not None:
            break
        time.sleep(0.05)
    assert built is not None
    token, index = built
    # A term never asked: the SQL path answers (None) while a thread fetches its places.
    kwargs = dict(filters=filters, offset=0, limit=5, after=None)
    assert readcache._page_from_index(index, token, **kwargs) is None
    for _ in range(200):
        if index.cached_term("alpha") is not None:
            break
        time.sleep(0.05)
    from_index = readcache._page_from_index(index, token, **kwargs)
    assert from_index is not None
    assert summary(from_index) == summary(selectors.startup_page(**kwargs))


def test_a_page_in_another_order_reads_its_ids_and_the_data_token_in_one_statement(
    client, pro_key, settings, django_assert_num_queries
):
    """A page in an order other than MRR walks that order in SQL for its ids; the data token
    comes in the same statement (one snapshot), not in a second round trip."""
    settings.LIST_CACHE_SECONDS = 0
    dataset(random.Random(5))
    query = "?sort=name-asc&minMrr=10&limit=5"
    list_page(client, pro_key, query)  # builds the index and keeps the rows
    # The request's tokens, then the ids with the token; the rows are kept copies.
    with django_assert_num_queries(2):
        body = list_page(client, pro_key, query)
    readcache.clear_local()
    settings.READ_CACHE_SECONDS = 0  # the plain SQL path gives the same page
    assert list_page(client, pro_key, query) == body


@pytest.mark.parametrize(
    "query", ["?sort=mrr-asc&minMrr=10&limit=5", "?sort=mrr-asc&page=3&limit=7"]
)
def test_a_page_by_ascending_mrr_is_walked_in_the_index(
    client, pro_key, settings, django_assert_num_queries, query
):
    """Ascending MRR is the default order's groups of equal MRR read backwards: its pages come
    from the index (no SQL walk of the order), the same as the database's."""
    settings.LIST_CACHE_SECONDS = 0
    dataset(random.Random(5))
    list_page(client, pro_key, query)  # builds the index and keeps the rows
    with django_assert_num_queries(1):  # the request's tokens; the rows are kept copies
        body = list_page(client, pro_key, query)
    readcache.clear_local()
    settings.READ_CACHE_SECONDS = 0  # the plain SQL path gives the same page
    assert list_page(client, pro_key, query) == body
