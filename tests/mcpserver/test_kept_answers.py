"""Kept MCP and /api/ai answers follow the change sequence per startup (aisurface/cache.py):
a write to one startup leaves the answers that neither show it nor may now show it as they
are (no query but the tokens); every answer it touches changes at once, on MCP and /api/ai
alike, with a new ETag."""

import json
import random

import anyio
import pytest
from django.db import transaction
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from startups.changes import startup_change_record
from startups.models import Startup
from tests.support.caches import clear_caches
from tests.support.factories import make_ai_startup, make_startup
from tests.support.writes import visible_create, visible_update

URL = "/api/mcp"


@pytest.fixture(autouse=True)
def _kept(settings):
    settings.READ_CACHE_SECONDS = 300
    settings.AI_CACHE_SECONDS = 300
    clear_caches()
    yield
    clear_caches()


def make_dataset() -> dict[str, Startup]:
    startups = {
        "acme": make_ai_startup(slug="acme", name="Acme", mrr=1000, owner_verified=True),
        "beta": make_ai_startup(slug="beta", name="Beta", category="Marketing", mrr=3000),
        "delta": make_ai_startup(slug="delta", name="Delta", category="Marketing", mrr=9000),
        "gamma": make_startup(name="Gamma", slug="gamma", category="Marketing", mrr=5000),
    }
    # The dataset's saves started an epoch; the first change through the sequence drops every
    # copy once (what came before it is unknown), as it does in production after a deploy.
    with transaction.atomic():
        startup_change_record(startup=startups["acme"], fields=["name"])
    return startups


@pytest.fixture
def dataset(db) -> dict[str, Startup]:
    return make_dataset()


def call(client, name: str, arguments: dict) -> dict:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": name, "arguments": arguments}
    response = client.post(URL, data=json.dumps(message), content_type="application/json")
    assert response.status_code == 200
    return response.json()["result"]


def slugs(result: dict) -> list[str]:
    return [startup["slug"] for startup in result["structuredContent"]["startups"]]


def mrrs(result: dict) -> dict[str, int | None]:
    return {s["slug"]: s["revenue"]["mrr"] for s in result["structuredContent"]["startups"]}


def applied(client, startup: Startup) -> None:
    """A request after a write: the process applies the change (its Change rows read, the
    changed startup read anew) once, whoever asks first; here its own profile, which shows
    the write."""
    client.get(f"/api/ai/startups/{startup.slug}")


def test_a_write_elsewhere_keeps_the_search_answer(client, dataset, django_assert_num_queries):
    kept = call(client, "search_startups", {"query": "acme"})
    assert slugs(kept) == ["acme"]
    visible_update(dataset["beta"], mrr=3500)  # beta does not match "acme"
    applied(client, dataset["beta"])
    with django_assert_num_queries(1):  # the tokens: nothing searched, nothing rebuilt
        assert call(client, "search_startups", {"query": "acme"}) == kept


def test_a_write_elsewhere_keeps_the_discovery_answer_and_its_etag(
    client, dataset, django_assert_num_queries
):
    url = "/api/ai/discovery?category=marketing"
    first = client.get(url)
    assert [s["slug"] for s in first.json()["startups"]] == ["delta", "beta"]
    visible_update(dataset["acme"], mrr=1500, name="Acme Labs")  # not in marketing
    applied(client, dataset["acme"])
    with django_assert_num_queries(1):
        assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304


def test_an_mrr_change_shows_at_once_on_mcp_and_api_ai(client, dataset):
    url = "/api/ai/discovery?category=marketing"
    before = client.get(url)
    profile = client.get("/api/ai/startups/beta")
    assert slugs(call(client, "search_by_category", {"category": "marketing"})) == [
        "delta",
        "beta",
    ]
    visible_update(dataset["beta"], mrr=12000)
    result = call(client, "search_by_category", {"category": "marketing"})
    assert slugs(result) == ["beta", "delta"]
    assert mrrs(result)["beta"] == 12000
    assert (
        call(client, "get_startup", {"slug": "beta"})["structuredContent"]["revenue"]["mrr"]
        == 12000
    )
    after = client.get(url, HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200
    assert [s["slug"] for s in after.json()["startups"]] == ["beta", "delta"]
    assert after["ETag"] != before["ETag"]
    changed = client.get("/api/ai/startups/beta", HTTP_IF_NONE_MATCH=profile["ETag"])
    assert changed.status_code == 200
    assert changed.json()["revenue"]["mrr"] == 12000


def test_an_unpublished_startup_leaves_every_answer_at_once(client, dataset):
    assert slugs(call(client, "search_by_category", {"category": "marketing"})) == [
        "delta",
        "beta",
    ]
    assert client.get("/api/ai/startups/delta").status_code == 200
    assert call(client, "get_startup", {"slug": "delta"})["isError"] is False
    discovery = client.get("/api/ai/discovery").json()
    assert "delta" in [s["slug"] for s in discovery["startups"]]

    visible_update(dataset["delta"], is_published=False)
    assert slugs(call(client, "search_by_category", {"category": "marketing"})) == ["beta"]
    assert call(client, "get_startup", {"slug": "delta"})["isError"] is True
    assert client.get("/api/ai/startups/delta").status_code == 404
    discovery = client.get("/api/ai/discovery").json()
    assert "delta" not in [s["slug"] for s in discovery["startups"]]


def test_a_new_matching_startup_joins_at_once(client, dataset):
    assert slugs(call(client, "search_startups", {"query": "acme"})) == ["acme"]
    before = client.get("/api/ai/discovery").json()["count"]
    visible_create(
        name="Acme Two",
        slug="acme-two",
        category="Developer Tools",
        industry="Software",
        description="Acme Two helps teams ship.",
        mrr=50,
        ai_addon_active=True,
    )
    assert slugs(call(client, "search_startups", {"query": "acme"})) == ["acme", "acme-two"]
    assert client.get("/api/ai/discovery").json()["count"] == before + 1


def test_a_startup_turning_its_addon_on_joins_at_once(client, dataset):
    assert slugs(call(client, "search_by_category", {"category": "marketing"})) == [
        "delta",
        "beta",
    ]
    visible_update(dataset["gamma"], ai_addon_active=True)
    assert slugs(call(client, "search_by_category", {"category": "marketing"})) == [
        "delta",
        "gamma",
        "beta",
    ]


def test_a_full_answer_changes_only_for_a_startup_ranked_above_its_last(
    client, dataset, django_assert_num_queries
):
    arguments = {"category": "marketing", "limit": 1}
    kept = call(client, "search_by_category", arguments)
    assert slugs(kept) == ["delta"]
    visible_update(dataset["beta"], mrr=100)  # matches, but ranks below delta
    applied(client, dataset["beta"])
    with django_assert_num_queries(1):
        assert call(client, "search_by_category", arguments) == kept
    visible_update(dataset["beta"], mrr=9500)  # now above delta
    assert slugs(call(client, "search_by_category", arguments)) == ["beta"]


# Random writes between random reads: every kept answer equals a fresh one.

CALLS = [
    ("search_startups", {"query": "a"}),
    ("search_startups", {"query": "ship", "limit": 2}),
    ("search_startups", {"query": "äcme"}),
    ("search_startups", {"verified": True}),
    ("search_by_category", {"category": "marketing", "limit": 3}),
    ("search_by_industry", {"industry": "software"}),
    ("search_by_revenue", {"min_mrr": 1000, "max_mrr": 9000, "limit": 2}),
    ("find_verified_startups", {}),
    ("get_startup", {"slug": "r-3"}),
    ("get_startup_history", {"slug": "r-4"}),
]
PATHS = ["/api/ai/discovery", "/api/ai/discovery?category=marketing", "/api/ai/startups/r-5"]


def test_kept_answers_equal_fresh_ones_while_writes_interleave(client, db, settings):
    rng = random.Random(7)
    names = ["Acme", "Äcme", "ACME labs", "Beta", "Shipyard", "Zeta"]
    categories = ["Marketing", "Developer Tools", "Fintech"]
    startups = [
        make_ai_startup(
            slug=f"r-{n}",
            name=f"{rng.choice(names)} {n}",
            category=rng.choice(categories),
            mrr=rng.choice([None, 0, 900, 1000, 5000, 9000]),
            owner_verified=rng.random() < 0.5,
            ai_addon_active=rng.random() < 0.8,
        )
        for n in range(12)
    ]
    with transaction.atomic():
        startup_change_record(startup=startups[0], fields=["name"])
    compared = 0
    for step in range(80):
        target = rng.choice(startups)
        roll = rng.random()
        if roll < 0.4:
            visible_update(target, mrr=rng.choice([None, 0, 900, 1000, 5000, 9000, 20000]))
        elif roll < 0.55:
            visible_update(target, name=f"{rng.choice(names)} {step}")
        elif roll < 0.65:
            visible_update(target, category=rng.choice(categories))
        elif roll < 0.75:
            target.refresh_from_db()
            visible_update(target, is_published=not target.is_published)
        elif roll < 0.85:
            target.refresh_from_db()
            visible_update(target, ai_addon_active=not target.ai_addon_active)
        for _ in range(3):
            name, arguments = rng.choice(CALLS)
            kept = call(client, name, arguments)
            path = rng.choice(PATHS)
            kept_page = client.get(path)
            settings.AI_CACHE_SECONDS = 0  # every answer built anew
            assert kept == call(client, name, arguments), (step, name, arguments)
            fresh_page = client.get(path)
            settings.AI_CACHE_SECONDS = 300
            assert kept_page.status_code == fresh_page.status_code, (step, path)
            if kept_page.status_code == 200:
                assert kept_page.content == fresh_page.content, (step, path)
                assert kept_page["ETag"] == fresh_page["ETag"]
            compared += 1
    assert compared == 240


# Through the official MCP SDK, against a live server.


async def _search(url: str, arguments: dict) -> dict:
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("search_by_category", arguments)
            assert result.is_error is False
            return result.structured_content


def test_the_sdk_sees_a_write_at_once_and_keeps_the_rest(live_server, transactional_db):
    startups = make_dataset()
    url = f"{live_server.url}{URL}"

    def figures(answer: dict) -> list[tuple[str, int | None]]:
        return [(s["slug"], s["revenue"]["mrr"]) for s in answer["startups"]]

    marketing = {"category": "marketing"}
    assert figures(anyio.run(_search, url, marketing)) == [("delta", 9000), ("beta", 3000)]
    visible_update(startups["beta"], mrr=12000)
    assert figures(anyio.run(_search, url, marketing)) == [("beta", 12000), ("delta", 9000)]
    visible_update(startups["delta"], is_published=False)
    assert figures(anyio.run(_search, url, marketing)) == [("beta", 12000)]


def test_a_worker_without_its_own_copy_uses_the_shared_answer_after_a_write_elsewhere(
    client, dataset, django_assert_num_queries, monkeypatch
):
    """Another worker (here: this process keeping no answer of its own) finds the answer in
    the shared cache after a founder's edit to a startup the answer neither shows nor may now
    show: no search again. An edit that changes the answer makes every worker build it anew."""
    from aisurface import cache as ai_cache

    monkeypatch.setattr(ai_cache._AI_ANSWERS, "max_entries", 0)  # keeps nothing itself
    kept = call(client, "search_by_category", {"category": "marketing"})
    assert slugs(kept) == ["delta", "beta"]
    visible_update(dataset["acme"], mrr=1500, name="Acme Labs")  # not in marketing
    applied(client, dataset["acme"])
    # The tokens, and Acme read again by id once (may it now join?): no search.
    with django_assert_num_queries(2) as captured:
        assert call(client, "search_by_category", {"category": "marketing"}) == kept
    read = captured.captured_queries[1]["sql"]
    assert f'"startups_startup"."id" IN ({dataset["acme"].pk})' in read
    assert "arketing" not in read
    visible_update(dataset["beta"], mrr=12000)
    applied(client, dataset["beta"])
    changed = call(client, "search_by_category", {"category": "marketing"})
    assert slugs(changed) == ["beta", "delta"] and mrrs(changed)["beta"] == 12000
