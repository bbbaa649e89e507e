"""GET /api/ai/discovery and /api/ai/startups/{slug}: the curated AI set, snake_case, cached."""

import re
import time
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from apikeys.services import api_key_revoke
from quota.models import MonthlyUsage
from tests.support.caches import clear_caches
from tests.support.factories import (
    make_ai_startup,
    make_founder,
    make_social,
    make_startup,
    make_verification,
)

pytestmark = pytest.mark.django_db

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ENTRY_KEYS = {
    "name",
    "slug",
    "description",
    "category",
    "website",
    "profile_url",
    "api_url",
    "verified",
}
PROFILE_KEYS = {
    "name",
    "slug",
    "type",
    "description",
    "website",
    "industry",
    "categories",
    "founders",
    "founded_year",
    "technologies",
    "verified",
    "verification_status",
    "revenue",
    "updated_at",
    "source",
    "service_profile",
    "api_url",
    "same_as",
    "discovery",
}


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_caches()
    yield
    clear_caches()


def discovery(client: Client, **params) -> dict:
    response = client.get("/api/ai/discovery", params)
    assert response.status_code == 200, response.content
    return response.json()


def slugs(body: dict) -> list[str]:
    return [entry["slug"] for entry in body["startups"]]


# --- Discovery index ---


def test_discovery_lists_only_startups_with_a_live_ai_addon(client):
    live = make_ai_startup(slug="live")
    open_ended = make_ai_startup(slug="future", ai_addon_expires_at=timezone.now() + timedelta(1))
    make_ai_startup(slug="expired", ai_addon_expires_at=timezone.now() - timedelta(seconds=1))
    make_ai_startup(slug="inactive", ai_addon_active=False)
    make_ai_startup(slug="unpublished", is_published=False)
    make_startup(slug="plain")

    body = discovery(client)

    assert sorted(slugs(body)) == sorted([live.slug, open_ended.slug])
    assert body["count"] == 2


def test_discovery_has_the_spec_fields_in_snake_case(client, settings):
    settings.SITE_URL = "https://openstartup.example"
    startup = make_ai_startup(slug="acme", name="Acme", owner_verified=True, description=None)

    body = discovery(client)

    assert set(body) == {"source", "site", "updated_at", "count", "startups"}
    assert body["source"] == settings.SERVICE_NAME
    assert body["site"] == "https://openstartup.example"
    assert TIMESTAMP.match(body["updated_at"])
    [entry] = body["startups"]
    assert set(entry) == ENTRY_KEYS
    assert entry == {
        "name": "Acme",
        "slug": "acme",
        "description": None,
        "category": "Developer Tools",
        "website": startup.website,
        "profile_url": "https://openstartup.example/startups/acme",
        "api_url": "https://openstartup.example/api/ai/startups/acme",
        "verified": True,
    }


def test_empty_discovery_has_null_updated_at_and_zero_count(client):
    body = discovery(client)
    assert body["count"] == 0
    assert body["startups"] == []
    assert body["updated_at"] is None


def test_every_discovery_entry_api_url_resolves_to_its_profile(client):
    for n in range(4):
        make_ai_startup(slug=f"s{n}", owner_verified=n % 2 == 0)

    body = discovery(client)

    assert body["count"] == 4
    for entry in body["startups"]:
        response = client.get(urlsplit(entry["api_url"]).path)
        assert response.status_code == 200
        profile = response.json()
        assert profile["slug"] == entry["slug"]
        assert profile["api_url"] == entry["api_url"]
        assert profile["service_profile"] == entry["profile_url"]
        assert profile["verified"] == entry["verified"]


@pytest.mark.parametrize("word", ["developer-tools", "Developer Tools", "DEVELOPER-TOOLS"])
def test_category_filter_takes_a_slug_style_word(client, word):
    make_ai_startup(slug="dev", category="Developer Tools")
    make_ai_startup(slug="secondary", category="Marketing", categories=["Developer Tools"])
    make_ai_startup(slug="other", category="Marketing")

    assert sorted(slugs(discovery(client, category=word))) == ["dev", "secondary"]


def test_category_filter_matches_punctuated_names(client):
    make_ai_startup(slug="fit", category="Health & Fitness")
    assert slugs(discovery(client, category="health-fitness")) == ["fit"]


def test_industry_filter_takes_a_slug_style_word(client):
    make_ai_startup(slug="fin", industry="Financial Services")
    make_ai_startup(slug="soft", industry="Software")
    make_ai_startup(slug="none", industry=None)

    assert slugs(discovery(client, industry="financial-services")) == ["fin"]
    assert slugs(discovery(client, industry="software")) == ["soft"]


def test_verified_filter_uses_the_owner_account(client):
    make_ai_startup(slug="yes", owner_verified=True)
    make_ai_startup(slug="no", owner_verified=False)
    make_ai_startup(slug="unclaimed", owner=None)

    assert slugs(discovery(client, verified="true")) == ["yes"]
    assert sorted(slugs(discovery(client, verified="false"))) == ["no", "unclaimed"]


@pytest.mark.parametrize("value", ["maybe", "", "1", "yes"])
def test_invalid_verified_value_is_ignored(client, value):
    make_ai_startup(slug="yes", owner_verified=True)
    make_ai_startup(slug="no")
    assert discovery(client, verified=value)["count"] == 2


def test_unknown_category_matches_nothing_and_is_not_an_error(client):
    make_ai_startup(slug="dev")
    assert discovery(client, category="no-such-thing")["count"] == 0


def test_filters_combine(client):
    make_ai_startup(slug="a", category="Marketing", industry="Software", owner_verified=True)
    make_ai_startup(slug="b", category="Marketing", industry="Software")
    make_ai_startup(slug="c", category="Marketing", industry="Retail", owner_verified=True)

    body = discovery(client, category="marketing", industry="software", verified="true")

    assert slugs(body) == ["a"]


def test_discovery_is_one_query(client, django_assert_num_queries):
    for n in range(5):
        make_ai_startup(slug=f"s{n}")
    # Plus the read of the data token the answer is kept under.
    with django_assert_num_queries(2):
        client.get("/api/ai/discovery")
    with django_assert_num_queries(1):  # served from the cache: only the token is read
        client.get("/api/ai/discovery")


# --- Profile ---


def test_profile_has_every_spec_field(client, settings):
    settings.SITE_URL = "https://openstartup.example"
    startup = make_ai_startup(
        slug="acme",
        name="Acme",
        owner_verified=True,
        category="Developer Tools",
        categories=["Developer Tools", "Analytics"],
        industry="Software",
        founded=2021,
        technologies=["Python", "Django"],
        mrr=1200,
        arr=14400,
    )
    make_founder(startup, name="Ada", title="CEO", twitter="https://x.com/ada", position=0)
    make_founder(startup, name="Ben", linkedin="https://linkedin.com/in/ben", position=1)
    make_founder(startup, name="Cy", position=2)
    make_social(startup, platform="x", url="https://x.com/acme")
    make_social(startup, platform="linkedin", url="https://linkedin.com/company/acme")
    make_verification(startup, provider="stripe")

    response = client.get("/api/ai/startups/acme")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    profile = response.json()
    assert set(profile) == PROFILE_KEYS
    assert profile["type"] == "Organization"
    assert profile["categories"] == ["Developer Tools", "Analytics"]
    assert profile["founders"] == [
        {"name": "Ada", "title": "CEO", "url": "https://x.com/ada"},
        {"name": "Ben", "title": None, "url": "https://linkedin.com/in/ben"},
        {"name": "Cy", "title": None, "url": None},
    ]
    assert profile["founded_year"] == 2021
    assert profile["technologies"] == ["Python", "Django"]
    assert profile["verified"] is True
    assert profile["verification_status"] == "owner_verified"
    assert profile["revenue"] == {
        "mrr": 1200,
        "arr": 14400,
        "currency": "USD",
        "verified": True,
        "source": "stripe",
        "growth_30d": None,
        "synced_at": "2026-11-01T12:30:15.123Z",
        "status": "stale",  # the factory's sync is far older than VERIFICATION_STALE_HOURS
        "methodology_version": "v2",  # the version the figures were computed with
    }
    assert TIMESTAMP.match(profile["updated_at"])
    assert profile["source"] == settings.SERVICE_NAME
    assert profile["service_profile"] == "https://openstartup.example/startups/acme"
    assert profile["api_url"] == "https://openstartup.example/api/ai/startups/acme"
    assert profile["discovery"] == "https://openstartup.example/api/ai/discovery"
    assert profile["same_as"] == [
        startup.website,
        "https://linkedin.com/company/acme",
        "https://x.com/acme",
    ]


def test_profile_unknown_values_are_null_not_omitted(client):
    make_ai_startup(
        slug="bare",
        description=None,
        website=None,
        category=None,
        industry=None,
        founded=None,
        mrr=None,
        arr=None,
    )

    profile = client.get("/api/ai/startups/bare").json()

    assert set(profile) == PROFILE_KEYS
    for key in ("description", "website", "industry", "founded_year"):
        assert profile[key] is None
    assert profile["categories"] == []
    assert profile["same_as"] == []
    assert profile["revenue"]["mrr"] is None
    assert profile["revenue"]["arr"] is None


def test_unverified_owner_and_self_reported_revenue(client):
    make_ai_startup(slug="self", owner_verified=False, mrr=500, arr=6000)

    profile = client.get("/api/ai/startups/self").json()

    assert profile["verified"] is False
    assert profile["verification_status"] == "unverified"
    assert profile["revenue"]["verified"] is False
    assert profile["revenue"]["source"] == "self_reported"


def test_unclaimed_startup_revenue_comes_from_public_sources(client):
    make_ai_startup(slug="unclaimed", owner=None, mrr=500)
    profile = client.get("/api/ai/startups/unclaimed").json()
    assert profile["revenue"]["source"] == "public_sources"
    assert profile["verification_status"] == "unverified"


@pytest.mark.parametrize("kind", ["unknown", "no_addon", "expired", "unpublished"])
def test_profile_is_404_without_a_live_ai_addon(client, kind):
    if kind == "no_addon":
        make_startup(slug="x")
    elif kind == "expired":
        make_ai_startup(slug="x", ai_addon_expires_at=timezone.now() - timedelta(minutes=1))
    elif kind == "unpublished":
        make_ai_startup(slug="x", is_published=False)

    response = client.get("/api/ai/startups/x")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert set(response.json()["error"]) == {"code", "message", "requestId"}


def test_profile_queries_are_pinned(client, django_assert_num_queries):
    startup = make_ai_startup(slug="acme")
    make_founder(startup)
    make_social(startup)
    make_verification(startup)
    # data token + startup (+owner, verification) + founders + socials
    with django_assert_num_queries(4):
        assert client.get("/api/ai/startups/acme").status_code == 200


def test_rest_and_ai_figures_agree_for_the_same_startup(client):
    startup = make_ai_startup(slug="acme", mrr=4321, arr=51852, owner_verified=True)
    make_verification(startup, provider="polar")
    make_founder(startup, name="Ada")

    rest = client.get("/api/v1/startups/acme").json()["data"]
    ai = client.get("/api/ai/startups/acme").json()

    assert ai["revenue"]["mrr"] == rest["revenue"]["mrr"] == 4321
    assert ai["revenue"]["arr"] == rest["revenue"]["arr"] == 51852
    assert ai["revenue"]["currency"] == rest["revenue"]["currency"]
    assert ai["revenue"]["verified"] == rest["revenue"]["verified"] is True
    assert ai["revenue"]["source"] == rest["verification"]["provider"]
    for field in ("name", "slug", "description", "website"):
        assert ai[field] == rest[field]
    assert ai["service_profile"] == rest["profileUrl"]
    assert ai["founded_year"] == rest["founded"]
    assert [f["name"] for f in ai["founders"]] == [f["name"] for f in rest["founders"]]


# --- Caching ---


def test_answers_are_publicly_cacheable_with_an_etag(client):
    make_ai_startup(slug="acme")
    for path in ("/api/ai/discovery", "/api/ai/startups/acme"):
        response = client.get(path)
        assert response["Cache-Control"] == "public, max-age=300"
        assert re.fullmatch(r'"[0-9a-f]{32}"', response["ETag"])
        assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("form", ["{}", "W/{}", '"other", {}', "*"])
def test_if_none_match_gets_304(client, form):
    make_ai_startup(slug="acme")
    for path in ("/api/ai/discovery", "/api/ai/startups/acme"):
        etag = client.get(path)["ETag"]
        response = client.get(path, headers={"If-None-Match": form.format(etag)})
        assert response.status_code == 304
        assert response.content == b""
        assert response["ETag"] == etag


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "*/*", "application/json"])
def test_any_accept_header_gets_json(client, accept):
    make_ai_startup(slug="acme")
    for path in ("/api/ai/discovery", "/api/ai/startups/acme", "/api/ai/startups/none"):
        response = client.get(path, headers={"Accept": accept})
        assert response.status_code in (200, 404)
        assert response["Content-Type"] == "application/json"


def test_stale_etag_gets_the_full_answer(client):
    make_ai_startup(slug="acme")
    response = client.get("/api/ai/discovery", headers={"If-None-Match": '"nope"'})
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_a_change_shows_at_once_on_the_ai_surface_too(client):
    """/api/ai answers are kept under the data token like every other surface, so a write
    shows on the next request, not after AI_CACHE_SECONDS."""
    startup = make_ai_startup(slug="acme", name="Old")
    first = client.get("/api/ai/startups/acme")
    assert client.get("/api/ai/startups/acme")["ETag"] == first["ETag"]  # kept meanwhile
    startup.name = "New"
    startup.save()
    second = client.get("/api/ai/startups/acme")
    assert second.json()["name"] == "New"
    assert second["ETag"] != first["ETag"]
    assert client.get("/api/v1/startups/acme").json()["data"]["name"] == "New"


def test_a_change_shows_once_the_cache_lifetime_has_passed(client, settings):
    settings.AI_CACHE_SECONDS = 1
    startup = make_ai_startup(slug="acme", name="Old")
    assert client.get("/api/ai/startups/acme")["Cache-Control"] == "public, max-age=1"
    startup.name = "New"
    startup.save()
    time.sleep(1.1)
    assert client.get("/api/ai/startups/acme").json()["name"] == "New"


def test_default_cache_lifetime_is_at_most_five_minutes():
    from django.conf import settings

    assert 0 < settings.AI_CACHE_SECONDS <= 300


def test_cache_entry_reports_its_age(client):
    make_ai_startup(slug="acme")
    assert client.get("/api/ai/discovery")["Age"] == "0"


def test_cache_key_includes_filters(client):
    make_ai_startup(slug="a", owner_verified=True)
    make_ai_startup(slug="b")
    assert discovery(client)["count"] == 2
    assert discovery(client, verified="true")["count"] == 1
    assert discovery(client, verified="false")["count"] == 1


def test_cache_key_includes_the_site_url(client, settings):
    make_ai_startup(slug="a")
    settings.SITE_URL = "https://one.example"
    assert discovery(client)["site"] == "https://one.example"
    settings.SITE_URL = "https://two.example"
    assert discovery(client)["site"] == "https://two.example"


def test_not_found_is_not_cached(client):
    assert client.get("/api/ai/startups/late").status_code == 404
    make_ai_startup(slug="late")
    assert client.get("/api/ai/startups/late").status_code == 200


def test_answers_come_from_the_database_when_the_cache_server_is_down(client, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
        }
    }
    settings.DJANGO_REDIS_IGNORE_EXCEPTIONS = True
    make_ai_startup(slug="acme")

    assert client.get("/api/ai/discovery").json()["count"] == 1
    assert client.get("/api/ai/startups/acme").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer osk_wrong"},
        {"X-API-Key": "osk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
        {"Authorization": "Bearer "},
    ],
)
def test_wrong_api_key_gets_401_on_the_ai_surface(client, headers):
    make_ai_startup(slug="acme")
    for path in ("/api/ai/discovery", "/api/ai/startups/acme"):
        response = client.get(path, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_api_key"


def test_revoked_key_gets_401_and_a_good_key_spends_nothing(client, api_key):
    key, raw = api_key
    make_ai_startup(slug="acme")
    for _ in range(3):
        response = client.get("/api/ai/startups/acme", headers={"Authorization": f"Bearer {raw}"})
        assert response.status_code == 200
    assert not MonthlyUsage.objects.filter(used__gt=0).exists()
    client.get("/api/v1/startups/acme", headers={"X-API-Key": raw})
    assert MonthlyUsage.objects.get(account=key.account).used == 1
    api_key_revoke(api_key=key)
    response = client.get("/api/ai/discovery", headers={"X-API-Key": raw})
    assert response.status_code == 401
