"""A sync that changed nothing shows its time at once on every server, each keeping its copies:
SQLite with the local-memory cache, or PostgreSQL with Redis (whatever the run is on)."""

from datetime import timedelta

import pytest

from startups.models import Change
from tests.support.connectors import stripe_connection
from tests.support.factories import make_api_key, make_subscription
from tests.support.processes import (
    gunicorn_server,
    http_get,
    process_env,
    skip_unless_the_database_can_be_shared,
)
from tests.support.verification_fakes import NOW
from verification.services import revenue_sync

FIRST, SECOND = NOW, NOW + timedelta(minutes=5)  # the same figures, still fresh


@pytest.mark.django_db(transaction=True)
def test_a_no_change_sync_shows_on_every_worker_of_every_server(fake_providers):
    skip_unless_the_database_can_be_shared()
    connection = stripe_connection(fake_providers)
    revenue_sync(connection=connection, now=FIRST)
    key, raw = make_api_key()
    make_subscription(account=key.account)
    headers = {"X-API-Key": raw}
    env = {**process_env(), "GUNICORN_ACCESS_LOG": "", "READ_CACHE_SECONDS": "300"}

    def seen(port: int) -> set[str]:
        detail = http_get(port, "/api/v1/startups/acme", headers)[1]["data"]
        (row,) = http_get(port, "/api/v1/startups", headers)[1]["data"]
        return {detail["revenue"]["lastSyncedAt"], row["revenue"]["lastSyncedAt"]}

    with gunicorn_server(env, workers=2) as a, gunicorn_server(env) as b:
        for _ in range(4):  # fills the copies of (most likely) every worker
            assert seen(a) | seen(b) == {"2026-11-15T12:00:00.000Z"}
        changes = Change.objects.count()
        revenue_sync(connection=connection, now=SECOND)
        assert list(Change.objects.values_list("fields", flat=True))[changes:] == []
        for _ in range(4):
            assert seen(a) | seen(b) == {"2026-11-15T12:05:00.000Z"}
