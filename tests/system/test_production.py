"""Production stack: health probes, the read-replica router, gunicorn config, bench views.

Outages are in tests/system/test_faults.py.
"""

import os
import warnings
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections, transaction

from apikeys.models import ApiKey
from core.routers import ReplicaRouter
from quota.models import MonthlyUsage
from startups.models import Startup
from tests.support.processes import gunicorn_config

ROOT = Path(__file__).resolve().parents[2]


# Probes


@pytest.mark.django_db
def test_healthz_answers_without_touching_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-store" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_reports_database_and_cache_ok(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "cache": "ok"}}


@pytest.mark.django_db
def test_probes_spend_no_allowance_even_with_a_key(client, api_key):
    _, raw = api_key
    for path in ("/healthz", "/readyz"):
        assert client.get(path, headers={"Authorization": f"Bearer {raw}"}).status_code == 200
    assert not MonthlyUsage.objects.exists()


# Read replica router


@pytest.fixture
def with_replica(settings):
    """A `replica` alias in DATABASES (the router only looks at the aliases)."""
    warnings.filterwarnings("ignore", "Overriding setting DATABASES", UserWarning)
    settings.DATABASES = {**settings.DATABASES, "replica": settings.DATABASES["default"]}


def test_dataset_reads_outside_a_web_request_stay_on_the_primary(with_replica):
    """A web request reads the replica only once it has replayed the primary's position
    (tests/system/test_replica.py runs a real standby); commands never do."""
    router = ReplicaRouter()
    assert router.db_for_read(Startup) == "default"
    assert router.db_for_write(Startup) == "default"


def test_counters_and_keys_are_always_read_on_the_primary(with_replica):
    router = ReplicaRouter()
    assert router.db_for_read(MonthlyUsage) == "default"
    assert router.db_for_read(ApiKey) == "default"
    assert router.db_for_read(get_user_model()) == "default"


def test_without_a_replica_everything_uses_the_primary():
    router = ReplicaRouter()
    assert "replica" not in settings.DATABASES
    assert router.db_for_read(Startup) == "default"


@pytest.mark.django_db
def test_reads_inside_a_transaction_stay_on_the_primary(with_replica):
    router = ReplicaRouter()
    with transaction.atomic():
        assert connections["default"].in_atomic_block
        assert router.db_for_read(Startup) == "default"


def test_reads_that_fill_a_per_process_copy_go_to_the_primary(with_replica):
    """Fills name the primary themselves: the router never asks the cache."""
    from startups.selectors import published_startups

    assert published_startups(db="default").db == "default"
    assert published_startups().db == "default"  # outside a web request


def test_the_replica_is_never_migrated(with_replica):
    router = ReplicaRouter()
    assert router.allow_migrate("default", "startups") is True
    assert router.allow_migrate("replica", "startups") is False


# gunicorn


def test_gunicorn_config_reads_workers_threads_and_trusted_proxies_from_the_environment():
    env = {
        **os.environ,
        "WEB_CONCURRENCY": "3",
        "GUNICORN_THREADS": "4",
        "TRUSTED_PROXIES": "10.0.0.1/8, 192.0.2.7",
    }
    config = gunicorn_config(env)
    assert config["workers"] == "3"
    assert config["threads"] == "4"
    assert config["forwarded_allow_ips"] == "['10.0.0.0/8', '192.0.2.7/32']"
    assert config["accesslog"] == "-"
    assert int(config["graceful_timeout"]) > 0


# Benchmark views


def test_the_bench_views_are_not_mounted_unless_asked_for(client):
    assert settings.BENCH_VIEWS is False
    assert client.get("/bench/bare").status_code == 404
    assert client.get("/bench/minimal").status_code == 404


# Several app servers


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="needs PostgreSQL (DATABASE_URL): two servers on one shared database",
)
@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_instances_give_identical_answers_and_one_exact_free_allowance():
    from django.db import connection

    from tests.support.factories import make_api_key, make_startups, make_subscription
    from tests.support.processes import gunicorn_server, http_get, wait_for_other_sessions_to_end

    make_startups(15)
    _, free = make_api_key()
    pro_key, pro = make_api_key()
    make_subscription(account=pro_key.account)
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    # Behind a load balancer every instance has the same public address.
    env = {"DATABASE_URL": url, "GUNICORN_ACCESS_LOG": "", "SITE_URL": "https://api.example.test"}
    try:
        with gunicorn_server(env) as a, gunicorn_server(env) as b:
            pro_h = {"X-API-Key": pro}
            slug = http_get(a, "/api/v1/startups?limit=1", pro_h)[1]["data"][0]["slug"]
            for path in ("/api/v1/startups?sort=name-asc&page=2", f"/api/v1/startups/{slug}"):
                assert http_get(a, path, pro_h)[:2] == http_get(b, path, pro_h)[:2]
            served, statuses = 0, []
            for i in range(12):  # 10 records a page, alternating servers: 100 in all, then 429
                status, body, _ = http_get((a, b)[i % 2], "/api/v1/startups", {"X-API-Key": free})
                statuses.append(status)
                served += len(body.get("data", []))
            assert served == 100
            assert statuses == [200] * 10 + [429, 429]
    finally:
        wait_for_other_sessions_to_end()


@pytest.mark.skipif(
    not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")),
    reason="needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL): two servers sharing both",
)
@pytest.mark.django_db(transaction=True)
def test_a_write_shows_on_both_servers_at_once_though_each_keeps_copies():
    from django.db import connection

    from apikeys.services import api_key_revoke
    from tests.support.factories import make_pro_key, make_startup
    from tests.support.processes import gunicorn_server, http_get, wait_for_other_sessions_to_end

    startup = make_startup(name="Before", slug="shared", mrr=10)
    key, raw = make_pro_key()
    headers = {"X-API-Key": raw}
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {"DATABASE_URL": url, "GUNICORN_ACCESS_LOG": "", "READ_CACHE_SECONDS": "300"}

    def names() -> list[str]:
        return [
            http_get(port, "/api/v1/startups/shared", headers)[1]["data"]["name"] for port in (a, b)
        ]

    try:
        with gunicorn_server(env) as a, gunicorn_server(env) as b:
            assert names() == ["Before", "Before"]
            # A change no server is told about stays unseen: both answer from their copies...
            # (raw SQL: every ORM write of a registered model is caught, bulk ones included)
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE startups_startup SET name = %s WHERE id = %s",
                    ["Unannounced", startup.pk],
                )
            assert names() == ["Before", "Before"]
            # ...and a write through the ORM reaches both on the very next request.
            startup.name = "After"
            startup.save()
            assert names() == ["After", "After"]
            api_key_revoke(api_key=key)
            for port in (a, b):
                status, body, _ = http_get(port, "/api/v1/startups/shared", headers)
                assert (status, body["error"]["code"]) == (401, "invalid_api_key")
    finally:
        wait_for_other_sessions_to_end()
