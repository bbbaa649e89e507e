"""A detail miss (no kept copy of the profile) reads a fixed number of statements however many
founders, socials and monthly rows the startup has: a regression adding a query per row fails
here. The varied detail benchmark (bench/varied.lua) measures exactly this path."""

from datetime import UTC, date, datetime

import pytest

from restapi.profiles import PROFILES
from tests.support.factories import (
    make_founder,
    make_pro_key,
    make_social,
    make_startup,
    make_verification,
)

pytestmark = pytest.mark.django_db

# The tokens; the startup with its verification and connection, its founders, socials and
# monthly rows as JSON arrays, in one statement (a Pro key spends no allowance).
DETAIL_MISS_STATEMENTS = 2


def verified(slug: str, rows: int):
    startup = make_startup(slug=slug, mrr=1000)
    for n in range(rows):
        make_founder(startup, name=f"Founder {n}", position=n)
        make_social(startup, platform=f"site{n}", url=f"https://example.com/{slug}/{n}")
    months = [(date(2025, 1 + n, 1), 100 + n, n) for n in range(rows)]
    make_verification(startup, months=months)
    return startup


@pytest.mark.parametrize("rows", [1, 6])
def test_a_detail_miss_reads_a_fixed_number_of_statements(client, rows, django_assert_num_queries):
    verified("acme", rows)
    _, raw = make_pro_key()
    client.get("/api/v1/startups/acme", HTTP_X_API_KEY=raw)  # the key's own reads, once
    PROFILES.clear()
    with django_assert_num_queries(DETAIL_MISS_STATEMENTS):
        response = client.get("/api/v1/startups/acme", HTTP_X_API_KEY=raw)
    assert response.status_code == 200
    assert len(response.json()["data"]["verification"]["monthly"]) == rows


# The tokens; the startup and its snapshots, in one statement (startups/listsql.py).
HISTORY_STATEMENTS = 2


def test_the_history_reads_the_startup_and_its_snapshots_in_one_statement(
    client, django_assert_num_queries
):
    startup = verified("acme", 6)
    for day in (1, 2, 3):
        startup.snapshots.create(
            date=date(2026, 1, day),
            synced_at=datetime(2026, 1, day, 12, tzinfo=UTC),
            provider="stripe",
            mrr=1000 + day,
            arr=12000,
            customers=3,
            last_30_days=900,
            total_revenue=5000,
        )
    _, raw = make_pro_key()
    client.get("/api/v1/startups/acme/history", HTTP_X_API_KEY=raw)  # the key's own reads, once
    with django_assert_num_queries(HISTORY_STATEMENTS):
        response = client.get("/api/v1/startups/acme/history", HTTP_X_API_KEY=raw)
    assert response.status_code == 200
    assert [row["mrr"] for row in response.json()["data"]] == [1001, 1002, 1003]
    assert response.json()["meta"]["slug"] == "acme"
