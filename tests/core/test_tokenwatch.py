"""The data token kept in memory through LISTEN/NOTIFY (core/tokenwatch.py): a cached
anonymous answer sends no query, a write committed by another process shows at once, a
watch cut off from PostgreSQL is not trusted after MAX_LAG_SECONDS, and keyed requests
always read the tokens themselves (a revocation never waits for the watch).

Other processes' writes are made the way another server makes them: through their own
connection (a `manage.py` process, or plain psycopg), never through this process's code.
"""

import os
import subprocess
import sys
import time
from collections.abc import Callable

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from apikeys.models import ApiKey
from core import readcache, tokenwatch
from core.models import Generation
from startups.models import Startup
from tests.support.factories import make_ai_startup, make_pro_key
from tests.support.processes import ROOT, TcpProxy, wait_for_other_sessions_to_end

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def _until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _other_server(sql: str, params: tuple = ()) -> None:
    """A write committed through a connection of its own, sending no notification."""
    url = _database_url().replace("postgres://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql, params)


@pytest.fixture
def watch(settings, monkeypatch):
    """This process's watch, on (as in production), stopped at the end of the test."""
    settings.READ_TOKEN_WATCH = True
    settings.READ_CACHE_SECONDS = 300
    fresh = tokenwatch.TokenWatch(readcache.PRIMARY, readcache.TOKEN_WATCH.read_tokens)
    monkeypatch.setattr(readcache, "TOKEN_WATCH", fresh)
    yield fresh
    fresh.stop()
    wait_for_other_sessions_to_end()


def _confirmed(watch: tokenwatch.TokenWatch) -> None:
    readcache.current("data")  # makes sure the tokens exist
    assert _until(lambda: watch.tokens() is not None), "the watch never confirmed the tokens"


def _discovery(client) -> list[str]:
    response = client.get("/api/ai/discovery")
    assert response.status_code == 200
    return [entry["description"] for entry in response.json()["startups"]]


def test_a_cached_anonymous_answer_sends_no_query(client, watch, django_assert_num_queries):
    make_ai_startup(name="Watched", description="first")
    _confirmed(watch)
    assert _listeners() == 1
    assert _discovery(client) == ["first"]
    with django_assert_num_queries(0):
        assert _discovery(client) == ["first"]


def test_without_the_watch_every_answer_reads_the_tokens(
    client, watch, settings, django_assert_num_queries
):
    """Behind PgBouncer in transaction mode (no LISTEN) the token is read per request."""
    settings.PGBOUNCER_TRANSACTION_MODE = True
    make_ai_startup(name="Watched", description="first")
    assert _discovery(client) == ["first"]
    with django_assert_num_queries(1):
        assert _discovery(client) == ["first"]
    assert _listeners() == 0  # and no listener was started for it


def _listeners() -> int:
    """Sessions of a token watch on the test database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            [tokenwatch.APPLICATION_NAME],
        )
        return cursor.fetchone()[0]


def test_a_write_committed_by_another_process_shows_on_the_next_answers(client, watch, monkeypatch):
    """The other process's write notifies at commit: with the heartbeat a minute away, only
    the notification can bring the new token in time."""
    monkeypatch.setattr(tokenwatch, "HEARTBEAT_SECONDS", 60.0)
    monkeypatch.setattr(tokenwatch, "MAX_LAG_SECONDS", 120.0)
    startup = make_ai_startup(name="Watched", description="first")
    _confirmed(watch)
    assert _discovery(client) == ["first"]
    write = (
        "from startups.models import Startup; "
        f"s = Startup.objects.get(pk={startup.pk}); s.description = 'second'; s.save()"
    )
    run = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", write],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert _until(lambda: _discovery(client) == ["second"], seconds=2.0)


def test_a_write_this_process_commits_shows_at_once(client, watch, monkeypatch):
    monkeypatch.setattr(tokenwatch, "HEARTBEAT_SECONDS", 60.0)
    monkeypatch.setattr(tokenwatch, "MAX_LAG_SECONDS", 120.0)
    startup = make_ai_startup(name="Watched", description="first")
    _confirmed(watch)
    assert _discovery(client) == ["first"]
    startup.description = "second"
    startup.save()
    assert _discovery(client) == ["second"]


def test_a_watch_cut_off_from_postgresql_is_trusted_no_longer_than_its_lag(
    client, watch, monkeypatch
):
    """The listener's connection hangs (a partition): no notification, no heartbeat. A write
    another server commits meanwhile shows once MAX_LAG_SECONDS have passed."""
    db = connection.settings_dict
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)))
    proxy.start()
    direct = watch._params

    def through_the_proxy() -> dict:
        return {**direct(), "host": "127.0.0.1", "port": proxy.port}

    monkeypatch.setattr(watch, "_params", through_the_proxy)
    try:
        startup = make_ai_startup(name="Watched", description="first")
        _confirmed(watch)
        assert _discovery(client) == ["first"]
        proxy.mode = "hang"
        _other_server(
            f'UPDATE "{Startup._meta.db_table}" SET description = %s WHERE id = %s',  # noqa: S608
            ("second", startup.pk),
        )
        _other_server(
            f'UPDATE "{Generation._meta.db_table}" SET token = %s WHERE kind = %s',  # noqa: S608
            ("written-elsewhere", "data"),
        )
        cut_off = time.monotonic()
        assert _until(lambda: _discovery(client) == ["second"], seconds=3.0)
        assert time.monotonic() - cut_off < tokenwatch.MAX_LAG_SECONDS + 0.5
    finally:
        proxy.mode = "pass"
        watch.stop()
        proxy.stop()


def test_a_keyed_request_never_takes_the_auth_token_from_the_watch(client, watch, monkeypatch):
    """A key revoked by another server that sent no notification: refused on the very next
    request, although the watch still holds the old tokens."""
    monkeypatch.setattr(tokenwatch, "HEARTBEAT_SECONDS", 60.0)
    monkeypatch.setattr(tokenwatch, "MAX_LAG_SECONDS", 120.0)
    make_ai_startup(name="Watched", slug="watched")
    key, raw = make_pro_key()
    headers = {"HTTP_X_API_KEY": raw}
    _confirmed(watch)
    assert client.get("/api/v1/startups/watched", **headers).status_code == 200
    assert client.get("/api/v1/startups/watched", **headers).status_code == 200
    held = watch.tokens()
    _other_server(
        f'UPDATE "{ApiKey._meta.db_table}" SET revoked_at = %s WHERE id = %s',  # noqa: S608
        (timezone.now(), key.pk),
    )
    _other_server(
        f'UPDATE "{Generation._meta.db_table}" SET token = %s WHERE kind = %s',  # noqa: S608
        ("revoked-elsewhere", "auth"),
    )
    assert watch.tokens() == held
    response = client.get("/api/v1/startups/watched", **headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"


def test_a_request_keeps_the_data_token_it_took_first(watch, monkeypatch):
    """A request that took the data token from the watch and then reads the tokens (its key)
    keeps the first one, so what it fills is filed under the token it read before the rows."""
    from django.core import signals

    monkeypatch.setattr(tokenwatch, "HEARTBEAT_SECONDS", 60.0)
    monkeypatch.setattr(tokenwatch, "MAX_LAG_SECONDS", 120.0)
    _confirmed(watch)
    signals.request_started.send(sender=None)
    try:
        first = readcache.current("data")
        _other_server(
            f'UPDATE "{Generation._meta.db_table}" SET token = %s WHERE kind = %s',  # noqa: S608
            ("written-elsewhere", "data"),
        )
        assert readcache.current("auth") is not None  # both tokens read from the database
        assert readcache.current("data") == first
    finally:
        signals.request_finished.send(sender=None)
    assert readcache.current("data") == "written-elsewhere"  # the next request's
