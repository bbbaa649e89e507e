"""The detail document of a startup, field by field: every key, its order, its type and its
null, for a rich verified startup and for the sparse ones (self-reported, verified without
MRR or months), exactly as the REST detail serves it (read on a miss: no kept copy)."""

from datetime import UTC, date, datetime

import pytest

from restapi.profiles import PROFILES
from startups.profilerow import profile_of, startup_profile
from startups.selectors import startup_get
from tests.support.factories import (
    make_founder,
    make_pro_key,
    make_social,
    make_startup,
    make_verification,
)
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db

SYNCED = datetime(2026, 11, 1, 12, 30, 15, 123456, tzinfo=UTC)


def rich() -> None:
    """Founders and socials with ties in their order, optional fields null and set, text that
    JSON must escape, months out of order and beyond 32 bits, a provider's own figure."""
    startup = make_startup(
        name='Acme "Rockets" \\ Ünïcode ✨',
        slug="acme",
        mrr=4200,
        icon="https://acme.example/icon.png",
        description="Line one\nline two\t'quoted' \u2028 and </script>",
        website="https://acme.example",
        category="Developer Tools",
        business_type="B2B",
        founded=2021,
        country="DE",
        team_size="2-5",
        technologies=["django", "postgres"],
        founder_name="Ada Lovelace",
        growth_30d=0.125,
        on_sale=True,
        asking_price=150_000,
    )
    make_founder(startup, name="Grace", title="CTO", twitter="https://x.com/grace", position=1)
    make_founder(startup, name="Ada Lovelace", linkedin="https://linkedin.com/in/ada", position=0)
    make_founder(startup, name='Zoë "Q" O\'Neil', title="", position=1)
    make_social(startup, platform="x", url="https://x.com/acme")
    make_social(startup, platform="github", url="https://github.com/acme")
    make_social(startup, platform="x", url="https://x.com/acme_two")
    make_verification(
        startup,
        verified_at=SYNCED,
        months=[
            (date(2025, 3, 1), 1200, 200),
            (date(2025, 1, 1), 1000, 0),
            (date(2025, 2, 1), 5_000_000_000, 1),
        ],
        credential="restricted_read",
        last_30_days=4100,
        customers=42,
        provider_reported={"mrr": 4000, "revenue": 3900, "definition": "MRR", "period": "current"},
    )
    ProviderConnection.objects.create(
        startup=startup,
        provider="stripe",
        encrypted_key="-",
        status="key_revoked",
        account_id="acct_1",
        account_name="Acme Inc",
        account_domain="acme.example",
    )


def sparse() -> None:
    # Self-reported with every optional field null; a founder who typed only a name.
    make_startup(name="Solo", slug="solo", founder_name="Sam Solo")
    # Verified without MRR, months or a named provider account (and a connection that says
    # nothing of it); no founder at all.
    bare = make_startup(name="Bare", slug="bare", mrr=None, growth_30d=0.5)
    make_verification(bare, provider="demo", mrr=None, verified_at=SYNCED)
    ProviderConnection.objects.create(startup=bare, provider="demo", encrypted_key="-")


def detail(client, slug: str) -> dict:
    _, raw = make_pro_key()
    PROFILES.clear()
    response = client.get(f"/api/v1/startups/{slug}", HTTP_X_API_KEY=raw)
    assert response.status_code == 200
    return response.json()["data"]


# What the detail served before its profile was read in one statement (the ORM's four).
ACME = {
    "name": 'Acme "Rockets" \\ Ünïcode ✨',
    "slug": "acme",
    "icon": "https://acme.example/icon.png",
    "description": "Line one\nline two\t'quoted' \u2028 and </script>",
    "website": "https://acme.example",
    "category": "Developer Tools",
    "businessType": "B2B",
    "founded": 2021,
    "country": "DE",
    "teamSize": "2-5",
    "founders": [
        {
            "name": "Ada Lovelace",
            "title": None,
            "twitter": None,
            "linkedin": "https://linkedin.com/in/ada",
        },
        {"name": "Grace", "title": "CTO", "twitter": "https://x.com/grace", "linkedin": None},
        {"name": 'Zoë "Q" O\'Neil', "title": "", "twitter": None, "linkedin": None},
    ],
    "technologies": ["django", "postgres"],
    "socials": [
        {"platform": "github", "url": "https://github.com/acme"},
        {"platform": "x", "url": "https://x.com/acme"},
        {"platform": "x", "url": "https://x.com/acme_two"},
    ],
    "revenue": {
        "mrr": 4200,
        "arr": 50400,
        "currency": "USD",
        "verified": True,
        "source": "verified",
        "growth30d": 0.125,
        "lastSyncedAt": "2026-11-01T12:30:15.123Z",
    },
    "verification": {
        "status": "key_revoked",
        "lastSyncedAt": "2026-11-01T12:30:15.123Z",
        "methodology": "http://testserver/docs/methodology/v2",
        "methodologyVersion": "v2",
        "provider": "stripe",
        "level": "verified",
        "verifiedAt": "2026-11-01T12:30:15.123Z",
        "currency": "USD",
        "mrr": 4200,
        "arr": 50400,
        "totalRevenue": 5000001999,
        "last30Days": 4100,
        "customers": 42,
        "historyMonths": 3,
        "monthly": [
            {"month": "2025-01", "gross": 1000, "refunds": 0, "net": 1000},
            {"month": "2025-02", "gross": 5000000000, "refunds": 1, "net": 4999999999},
            {"month": "2025-03", "gross": 1200, "refunds": 200, "net": 1000},
        ],
        "credential": "restricted_read",
        "providerReported": {
            "mrr": 4000,
            "revenue": 3900,
            "definition": "MRR",
            "period": "current",
            "differencePercent": {"mrr": 5.0, "revenue": 5.1},
        },
    },
    "providerAccount": {"name": "Acme Inc", "domain": "acme.example"},
    "onSale": True,
    "askingPrice": 150000,
    "profileUrl": "http://testserver/startups/acme",
}
SOLO = {
    "name": "Solo",
    "slug": "solo",
    "icon": None,
    "description": None,
    "website": None,
    "category": None,
    "businessType": None,
    "founded": None,
    "country": None,
    "teamSize": None,
    "founders": [{"name": "Sam Solo", "title": None, "twitter": None, "linkedin": None}],
    "technologies": [],
    "socials": [],
    "revenue": {
        "mrr": None,
        "arr": None,
        "currency": "USD",
        "verified": False,
        "source": "self_reported",
        "growth30d": None,
        "lastSyncedAt": None,
    },
    "verification": None,
    "providerAccount": None,
    "onSale": False,
    "askingPrice": None,
    "profileUrl": "http://testserver/startups/solo",
}
BARE = {
    "name": "Bare",
    "slug": "bare",
    "icon": None,
    "description": None,
    "website": None,
    "category": None,
    "businessType": None,
    "founded": None,
    "country": None,
    "teamSize": None,
    "founders": [],
    "technologies": [],
    "socials": [],
    "revenue": {
        "mrr": None,
        "arr": None,
        "currency": "USD",
        "verified": True,
        "source": "demo",
        "growth30d": None,
        "lastSyncedAt": "2026-11-01T12:30:15.123Z",
    },
    "verification": {
        "status": "stale",
        "lastSyncedAt": "2026-11-01T12:30:15.123Z",
        "methodology": "http://testserver/docs/methodology/v2",
        "methodologyVersion": "v2",
        "provider": "demo",
        "level": "verified",
        "verifiedAt": "2026-11-01T12:30:15.123Z",
        "currency": "USD",
        "mrr": None,
        "arr": None,
        "totalRevenue": 0,
        "last30Days": 0,
        "customers": 10,
        "historyMonths": 0,
        "monthly": [],
        "credential": None,
        "providerReported": None,
    },
    "providerAccount": None,
    "onSale": False,
    "askingPrice": None,
    "profileUrl": "http://testserver/startups/bare",
}


@pytest.mark.parametrize(("slug", "expected"), [("acme", ACME), ("solo", SOLO), ("bare", BARE)])
def test_the_detail_document_is_exactly_the_profile(client, slug, expected):
    rich()
    sparse()
    assert detail(client, slug) == expected
    assert list(detail(client, slug)) == list(expected)  # the keys' order too


@pytest.mark.parametrize("slug", ["acme", "solo", "bare"])
def test_one_statement_reads_the_profile_the_orm_loads(slug):
    """Every surface shapes from the same rows: the pages and attestations that load the
    startup through the ORM see exactly what the detail's one statement reads."""
    rich()
    sparse()
    assert startup_profile(slug=slug) == profile_of(startup_get(slug=slug))


def test_an_unknown_or_unpublished_slug_has_no_profile():
    make_startup(slug="hidden", is_published=False)
    assert startup_profile(slug="hidden") is None
    assert startup_profile(slug="nobody") is None
    assert startup_profile(slug="a\x00b") is None
