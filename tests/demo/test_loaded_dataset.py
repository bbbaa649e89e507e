"""The demo loader writes one dataset, whatever its speed: a digest of every row a small
`seed_demo` writes, through every path a large one takes (recipes reused past the unique ones,
figures computed in a process pool, startups in several chunks, on PostgreSQL the indexes
dropped and built again), pinned here. A faster loader must load exactly this."""

import hashlib
import json
from datetime import UTC, date, datetime

import pytest

from demo.seed import seed_demo
from startups.models import (
    Change,
    Founder,
    MonthlyRevenue,
    RevenueSnapshot,
    Social,
    Startup,
    Verification,
)
from verification import crypto
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
SYNCED = ("provider", "mrr", "arr", "total_revenue", "last_30_days", "customers")
# Ids differ between databases and runs: rows name their startup by slug, owners by username.
TABLES = {
    Startup: (
        "slug",
        "name",
        "icon",
        "description",
        "website",
        "category",
        "categories",
        "industry",
        "business_type",
        "founded",
        "country",
        "team_size",
        "technologies",
        "founder_name",
        "mrr",
        "arr",
        "currency",
        "growth_30d",
        "on_sale",
        "asking_price",
        "owner__username",
        "is_published",
        "ai_addon_active",
        "ai_addon_expires_at",
        "created_at",
        "updated_at",
    ),
    Founder: ("startup__slug", "name", "title", "twitter", "linkedin", "position"),
    Social: ("startup__slug", "platform", "url"),
    Verification: (
        "startup__slug",
        *SYNCED,
        "level",
        "verified_at",
        "currency",
        "methodology_version",
        "credential",
        "provider_reported",
    ),
    MonthlyRevenue: ("verification__startup__slug", "month", "gross", "refunds", "net"),
    RevenueSnapshot: ("startup__slug", "date", "synced_at", *SYNCED),
    ProviderConnection: (
        "startup__slug",
        "provider",
        "encrypted_key",
        "credential",
        "api_base",
        "status",
        "last_synced_at",
        "last_attempt_at",
        "last_error",
        "fx_rates",
        "lease_owner",
        "lease_until",
        "fetch_started_at",
        "account_id",
        "account_name",
        "account_domain",
        "created_at",
        "updated_at",
    ),
    Change: ("slug", "kind", "fields", "at"),
}


def _plain(value):
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _rows(model, columns) -> list[str]:
    rows = []
    for values in model.objects.values_list(*columns):
        row = dict(zip(columns, map(_plain, values), strict=True))
        if "encrypted_key" in row:  # a fresh Fernet token each time: the key it holds
            row["encrypted_key"] = crypto.decrypt_key(row["encrypted_key"])
        rows.append(json.dumps(row, sort_keys=True))
    return sorted(rows)


def loaded_dataset() -> dict[str, tuple[int, str]]:
    """Per table: its row count and a SHA-256 of its rows."""
    found = {}
    for model, columns in TABLES.items():
        rows = _rows(model, columns)
        digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
        found[model.__name__] = (len(rows), digest)
    return found


# Recorded before the loader was made faster; the same on SQLite and PostgreSQL.
EXPECTED = {
    "Startup": (160, "f133f3397df15f74"),
    "Founder": (223, "f5747d299810ea78"),
    "Social": (236, "79e24bb10090fac3"),
    "Verification": (71, "109cb1c59bb5aa40"),
    "MonthlyRevenue": (1881, "a4ea2ca8c45d5b0f"),
    "RevenueSnapshot": (3266, "ddf0e19d5395e000"),
    "ProviderConnection": (71, "c7f0e334648b0313"),
    "Change": (160, "7aebc615ed1fa58c"),
}


def test_the_loader_writes_the_pinned_dataset(monkeypatch):
    # A small count through the large count's paths.
    monkeypatch.setattr("demo.bulk.UNIQUE_RECIPES_UP_TO", 50)
    monkeypatch.setattr("demo.bulk.CHUNK", 70)
    monkeypatch.setattr("demo.bulk.REBUILD_INDEXES_FROM", 1)
    monkeypatch.setattr("demo.bulk.POOL_FROM", 1)  # figures computed in worker processes
    assert seed_demo(160, now=NOW) == 160
    assert loaded_dataset() == EXPECTED
