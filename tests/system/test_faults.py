"""Faults: Redis and PostgreSQL down, unreachable or silent, and coming back."""

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from core.logs import OncePerInterval
from openstartup.settings import redis_cache
from tests.support.factories import make_ai_startup, make_api_key, make_startup, make_subscription
from tests.support.processes import (
    ON_POSTGRES,
    ROOT,
    closed_port,
    gunicorn_behind_proxy,
    gunicorn_server,
    http_call,
    http_get,
    port_free,
    run_to_the_end,
    skip_behind_pgbouncer,
    wait_for_other_sessions_to_end,
)


def cache_logger_filter() -> OncePerInterval:
    return next(
        f for f in logging.getLogger("openstartup.cache").filters if isinstance(f, OncePerInterval)
    )


@pytest.fixture
def redis_down(settings):
    """The cache points at a Redis that is not there (a closed loopback port)."""
    settings.CACHES = {"default": redis_cache(f"redis://127.0.0.1:{closed_port()}/0")}
    cache_logger_filter()._next = 0.0  # start a fresh one-a-minute window
    yield


def every_endpoint(client: Client, slug: str, headers: dict | None = None) -> dict[str, int]:
    headers = headers or {}
    mcp_call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_startups", "arguments": {"limit": 3}},
    }
    return {
        "list": client.get("/api/v1/startups", headers=headers).status_code,
        "detail": client.get(f"/api/v1/startups/{slug}", headers=headers).status_code,
        "discovery": client.get("/api/ai/discovery", headers=headers).status_code,
        "profile": client.get(f"/api/ai/startups/{slug}", headers=headers).status_code,
        "mcp": client.post(
            "/api/mcp", json.dumps(mcp_call), content_type="application/json", headers=headers
        ).status_code,
        "llms": client.get("/llms.txt").status_code,
        "healthz": client.get("/healthz").status_code,
    }


@pytest.mark.django_db
def test_readyz_names_the_cache_when_redis_is_down(client, redis_down):
    started = time.monotonic()
    response = client.get("/readyz")
    assert time.monotonic() - started < 3
    assert response.status_code == 503
    body = response.json()
    assert body["checks"] == {"database": "ok", "cache": "down"}
    assert body["error"]["code"] == "not_ready"
    assert "cache" in body["error"]["message"]


# Redis down


@pytest.mark.django_db
def test_every_endpoint_still_answers_with_redis_down(client, redis_down):
    startup = make_ai_startup(name="Cacheless", mrr=900)
    assert every_endpoint(client, startup.slug) == dict.fromkeys(
        ["list", "detail", "discovery", "profile", "mcp", "llms", "healthz"], 200
    )


@pytest.mark.django_db
def test_free_allowance_is_still_counted_exactly_with_redis_down(client, redis_down):
    make_startup(name="Counted", mrr=10)
    _, raw = make_api_key()
    for _ in range(3):
        response = client.get("/api/v1/startups", headers={"X-API-Key": raw})
        assert response.status_code == 200
    assert response["X-Service-Quota-Remaining"] == "97"


@pytest.mark.django_db
def test_a_redis_outage_is_logged_once_a_minute_not_per_request(client, redis_down, caplog):
    startup = make_ai_startup(name="Quiet Logs", mrr=5)
    with caplog.at_level(logging.ERROR, logger="openstartup.cache"):
        for _ in range(5):
            assert client.get("/api/ai/discovery").status_code == 200
            assert client.get(f"/api/ai/startups/{startup.slug}").status_code == 200
    cache_records = [r for r in caplog.records if r.name == "openstartup.cache"]
    assert len(cache_records) == 1


def test_the_once_a_minute_filter_counts_what_it_held_back(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    gate = OncePerInterval(seconds=60)

    def record() -> logging.LogRecord:
        return logging.LogRecord("x", logging.ERROR, __file__, 1, "Redis down", None, None)

    assert gate.filter(record())
    assert [gate.filter(record()) for _ in range(9)] == [False] * 9
    clock[0] += 61
    first_of_next_minute = record()
    assert gate.filter(first_of_next_minute)
    assert "9 more" in first_of_next_minute.getMessage()


@pytest.mark.django_db
@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_a_real_redis_stopped_and_started_again_is_bypassed_then_used(client, settings):
    port = next(p for p in range(6390, 6400) if port_free(p))
    server = _start_redis(port)
    try:
        settings.CACHES = {"default": redis_cache(f"redis://127.0.0.1:{port}/0")}
        startup = make_ai_startup(name="Bounce", mrr=42)
        assert client.get("/readyz").status_code == 200
        assert client.get("/api/ai/discovery").status_code == 200
        server.terminate()
        server.wait(timeout=10)
        assert every_endpoint(client, startup.slug)["discovery"] == 200
        assert client.get("/readyz").json()["checks"]["cache"] == "down"
        server = _start_redis(port)
        assert client.get("/readyz").json()["checks"] == {"database": "ok", "cache": "ok"}
        assert client.get("/api/ai/discovery").status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=10)


def _start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        + ["--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        if server.poll() is not None:  # it could not bind: something else listens there
            raise RuntimeError(f"throwaway redis-server exited: port {port} is taken")
        if not port_free(port) and _pong(port):
            return server
        time.sleep(0.05)
    server.kill()
    raise RuntimeError("throwaway redis-server did not start")


def _throwaway_redis() -> tuple[subprocess.Popen, int]:
    """A redis-server of this test's own on a free port (another if that one was taken)."""
    for _ in range(5):
        port = closed_port()
        try:
            return _start_redis(port), port
        except RuntimeError:
            continue
    raise RuntimeError("no free port for a throwaway redis-server")


def _pong(port: int) -> bool:
    """Whether a Redis answers PING on `port` (not just anything listening there)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# PostgreSQL down

DB_DOWN_SCRIPT = """
import json, os, time
import django
django.setup()
from django.test import Client
client = Client()
results = {}
mcp = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                  "params": {"name": "search_startups", "arguments": {}}})
for name, call in [
    ("list", lambda: client.get("/api/v1/startups")),
    ("list_with_key", lambda: client.get("/api/v1/startups", headers={"X-API-Key": "os_x"})),
    ("detail", lambda: client.get("/api/v1/startups/acme")),
    ("discovery", lambda: client.get("/api/ai/discovery")),
    ("profile", lambda: client.get("/api/ai/startups/acme")),
    ("mcp", lambda: client.post("/api/mcp", mcp, content_type="application/json")),
    ("readyz", lambda: client.get("/readyz")),
    ("healthz", lambda: client.get("/healthz")),
    ("page", lambda: client.get("/startups/acme")),
]:
    started = time.monotonic()
    response = call()
    results[name] = {
        "status": response.status_code,
        "seconds": time.monotonic() - started,
        "type": response.get("Content-Type"),
        "body": (
            json.loads(response.content)
            if response.get("Content-Type", "").startswith("application/json")
            else response.content.decode()
        ),
    }
print(json.dumps(results))
"""


@pytest.mark.parametrize("failure", ["refused", "silent"])
def test_with_postgresql_unreachable_every_endpoint_gives_a_quick_503_json(failure):
    """Refused: nothing listens on the port. Silent: something accepts the TCP connection and
    never answers (a hung or firewalled server): the connect timeout must cut it short."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # the kernel completes handshakes; nobody ever speaks
    port = silent.getsockname()[1] if failure == "silent" else closed_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "openstartup.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{port}/nowhere",
        "DB_CONNECT_TIMEOUT": "1",
    }
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_REPLICA_URL", None)
    try:
        out = run_to_the_end([sys.executable, "-c", DB_DOWN_SCRIPT], cwd=ROOT, env=env, timeout=120)
    finally:
        silent.close()
    results = json.loads(out.strip().splitlines()[-1])
    assert results.pop("healthz")["status"] == 200
    # The site's pages get the site's styled 503 page, not the API's JSON.
    page = results.pop("page")
    assert (page["status"], page["type"]) == (503, "text/html; charset=utf-8")
    assert "Temporarily unavailable" in page["body"] and page["seconds"] < 3
    readyz = results.pop("readyz")
    assert readyz["status"] == 503
    assert readyz["body"]["checks"]["database"] == "down"
    # MCP clients get a JSON-RPC error object answering their request, not the
    # REST body.
    mcp = results.pop("mcp")
    assert (mcp["status"], mcp["type"]) == (503, "application/json")
    assert mcp["body"]["jsonrpc"] == "2.0"
    assert mcp["body"]["id"] == 1
    assert mcp["body"]["error"]["data"] == {"code": "service_unavailable"}
    assert mcp["seconds"] < 3
    for name, result in results.items():
        assert result["status"] == 503, name
        assert result["type"] == "application/json", name
        assert result["body"]["error"]["code"] == "service_unavailable", name
        assert result["seconds"] < 3, name


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_postgresql_going_away_gives_503_and_service_resumes_without_a_restart():
    """gunicorn reaches PostgreSQL through a TCP proxy we stop and start: the real server,
    which others use, is never touched."""
    make_startup(name="Survivor", mrr=77)
    env = {
        "DB_CONNECT_TIMEOUT": "2",
        "REDIS_URL": "",
        "GUNICORN_ACCESS_LOG": "",
    }
    with gunicorn_behind_proxy(env) as (proxy, port):
        status, body, _ = http_get(port, "/api/v1/startups")
        assert status == 200
        assert body["data"][0]["name"] == "Survivor"
        proxy.stop()  # PostgreSQL "goes down" under an open, persistent connection
        for _ in range(3):
            status, body, seconds = http_get(port, "/api/v1/startups")
            assert (status, body["error"]["code"]) == (503, "service_unavailable")
            assert seconds < 5
        assert http_get(port, "/readyz")[0] == 503
        proxy.start()  # ... and comes back: no restart
        assert http_get(port, "/readyz")[0] == 200
        status, body, _ = http_get(port, "/api/v1/startups")
        assert status == 200
        assert body["data"][0]["name"] == "Survivor"


# A revocation or plan change made while Redis is away sticks.


def _worker_statuses(access_log: Path, path: str) -> dict[str, set[int]]:
    """{worker pid: statuses it answered `path` with}, from the access log."""
    seen: dict[str, set[int]] = {}
    for line in access_log.read_text().splitlines():
        pid, status, logged_path = line.split(" ", 2)
        if logged_path == path:
            seen.setdefault(pid, set()).add(int(status))
    return seen


def _until_both_workers_answered(port: int, path: str, headers: dict, log: Path) -> None:
    for _ in range(200):
        http_get(port, path, headers)
        if len(_worker_statuses(log, path)) == 2:
            return
    raise AssertionError("one gunicorn worker never answered")


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
@pytest.mark.django_db(transaction=True)
def test_a_revocation_and_a_downgrade_during_a_redis_pause_stick_on_every_worker(tmp_path):
    """Two gunicorn workers hold per-process copies of two Pro keys; Redis is paused (SIGSTOP,
    as in a partition or a failover), one key is revoked with the operator command and the
    other account downgraded to Free; Redis resumes holding everything it held before. From
    the next request on, both workers refuse the revoked key and serve the other on Free."""
    from apikeys.services import subscription_set

    make_startup(name="Guarded", slug="guarded", mrr=10)
    revoked_key, revoked_raw = make_api_key()
    make_subscription(account=revoked_key.account)
    downgraded_key, downgraded_raw = make_api_key()
    make_subscription(account=downgraded_key.account)
    redis, redis_port = _throwaway_redis()
    db = connection.settings_dict
    env = {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "READ_CACHE_SECONDS": "300",
    }
    revoked = {"X-API-Key": revoked_raw}
    downgraded = {"X-API-Key": downgraded_raw}
    log = tmp_path / "access.log"
    try:
        with gunicorn_server(env, workers=2, access_log=log) as port:
            path = "/api/v1/startups/guarded"
            _until_both_workers_answered(port, path, revoked, log)
            for _ in range(10):  # both workers now hold copies of both keys
                assert http_get(port, path, revoked)[0] == 200
                status, _, _, headers = http_call(port, path, downgraded)
                assert (status, headers["X-Service-Plan"]) == (200, "Pro")
            redis.send_signal(signal.SIGSTOP)
            try:
                run = subprocess.run(
                    [sys.executable, "manage.py", "revoke_api_key", revoked_raw],
                    cwd=ROOT,
                    env={**os.environ, **env},
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert run.returncode == 0, run.stderr
                assert "Revoked" in run.stdout
                subscription_set(account=downgraded_key.account, plan="free")
                during = [http_get(port, path, revoked)[:3:2] for _ in range(6)]
                assert {status for status, _ in during} == {401}
            finally:
                redis.send_signal(signal.SIGCONT)
            log.write_text("")
            for _ in range(30):
                status, body, _ = http_get(port, path, revoked)
                assert (status, body["error"]["code"]) == (401, "invalid_api_key")
                status, _, _, headers = http_call(port, path, downgraded)
                assert (status, headers["X-Service-Plan"]) == (200, "Free")
            assert _worker_statuses(log, path) and all(
                statuses <= {200, 401} for statuses in _worker_statuses(log, path).values()
            )
            assert len(_worker_statuses(log, path)) == 2, "both workers answered after resume"
            # The breaker: after the first failure, requests stopped waiting on Redis.
            assert sorted(seconds for _, seconds in during)[3] < 0.5
    finally:
        redis.send_signal(signal.SIGCONT)
        redis.terminate()
        redis.wait(timeout=10)
        wait_for_other_sessions_to_end()


@pytest.mark.django_db
def test_revoke_api_key_says_so_and_fails_when_it_could_not_revoke():
    _, raw = make_api_key()
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{closed_port()}/x"}
    env.pop("REDIS_URL", None)
    run = subprocess.run(
        [sys.executable, "manage.py", "revoke_api_key", raw],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "NOT revoked" in run.stderr
    assert "Revoked" not in run.stdout


# A hung or slow database answers 503 within the deadline; probes keep answering.


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_a_hung_or_slow_database_gives_503_within_the_deadline_and_healthz_answers():
    make_startup(name="Patient", mrr=5)
    deadline = 2
    env = {
        "DB_REQUEST_DEADLINE_SECONDS": str(deadline),
        "DB_CONNECT_TIMEOUT": "3",
        "REDIS_URL": "",
        "GUNICORN_ACCESS_LOG": "",
    }
    with gunicorn_behind_proxy(env, workers=2) as (proxy, port):
        assert http_get(port, "/api/v1/startups")[0] == 200
        for mode in ("hang", "slow"):
            proxy.mode = mode
            for _ in range(3):
                status, body, seconds, headers = http_call(port, "/api/v1/startups")
                assert (status, body["error"]["code"]) == (503, "service_unavailable"), mode
                assert "slow" in body["error"]["message"], mode
                assert headers["Retry-After"] == "5"
                # The deadline plus a moment: no reconnect, commit or cursor read
                # runs on past it.
                assert seconds < deadline + 1, (mode, seconds)
                status, _, seconds = http_get(port, "/healthz")
                assert status == 200
                assert seconds < 1, (mode, seconds)
            status, body, seconds = http_get(port, "/readyz")
            assert (status, body["checks"]["database"]) == (503, "down")
            assert seconds < 3 + 1.5
        proxy.mode = "pass"
        for _ in range(20):  # connections cut by the deadline are replaced
            if http_get(port, "/api/v1/startups")[0] == 200:
                break
            time.sleep(0.2)
        status, body, _ = http_get(port, "/api/v1/startups")
        assert (status, body["data"][0]["name"]) == (200, "Patient")


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
@pytest.mark.django_db(transaction=True)
def test_concurrent_readyz_probes_never_report_a_healthy_cache_down():
    """Two probes at once used to overwrite each other's probe key: 65 false "cache down"
    answers in 400 with no fault at all."""
    redis, redis_port = _throwaway_redis()
    env = {"REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "GUNICORN_ACCESS_LOG": ""}
    if not ON_POSTGRES:
        env["DATABASE_URL"] = f"sqlite:///{connection.settings_dict['NAME']}"
    try:
        with gunicorn_server(env, workers=2) as port:
            results: list[int] = []
            answers: list = []

            def probe() -> None:
                answer = http_get(port, "/readyz")
                results.append(answer[0])
                if answer[0] != 200:
                    answers.append(answer)

            for _ in range(40):
                pair = [threading.Thread(target=probe) for _ in range(2)]
                for thread in pair:
                    thread.start()
                for thread in pair:
                    thread.join()
            assert results == [200] * 80, answers[:3]
    finally:
        redis.terminate()
        redis.wait(timeout=10)
        if ON_POSTGRES:
            wait_for_other_sessions_to_end()


# Records never delivered are never charged.


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_before_answering_charges_nothing(tmp_path):
    """A Free list call's worker is killed after the counter update and before its answer
    went out: once the hold expires the records are not counted, and the whole allowance can
    still be spent."""
    from quota.models import MonthlyUsage

    for n in range(3):
        make_startup(name=f"Row {n}", mrr=10 + n)
    account_key, raw = make_api_key()
    env = {
        "DB_REQUEST_DEADLINE_SECONDS": "0",
        "QUOTA_HOLD_SECONDS": "2",
        "REDIS_URL": "",
    }
    headers = {"X-API-Key": raw}
    log = tmp_path / "access.log"
    usage = MonthlyUsage.objects.filter(account_id=account_key.account_id)
    with gunicorn_behind_proxy(env, workers=1, access_log=log) as (proxy, port):
        status, _, _, found = http_call(port, "/api/v1/startups?limit=2", headers)
        assert (status, found["X-Service-Quota-Remaining"]) == (200, "98")
        for _ in range(100):  # the access log line follows the answer
            if log.read_text().strip():
                break
            time.sleep(0.02)
        worker = log.read_text().split()[0]
        proxy.mode, proxy.delay = "slow", 0.3  # the answer now takes a few round trips
        thread = threading.Thread(
            target=lambda: _ignore_errors(http_get, port, "/api/v1/startups?limit=2", headers)
        )
        thread.start()
        for _ in range(1500):
            if usage.values_list("used", flat=True).first() == 4:
                break
            time.sleep(0.01)
        assert usage.values_list("used", flat=True).first() == 4  # charged, not answered
        os.kill(int(worker.strip("<>")), signal.SIGKILL)
        thread.join(timeout=30)
        proxy.mode = "pass"
        time.sleep(2.5)  # the hold expires
        for _ in range(100):  # gunicorn replaces the worker
            try:
                status, _, _, found = http_call(port, "/api/v1/startups?limit=1", headers)
                break
            except OSError:
                time.sleep(0.1)
        # 2 delivered before, 1 now: the 2 that never arrived are not charged.
        assert (status, found["X-Service-Quota-Remaining"]) == (200, "97")
        # And the whole allowance can still be spent: 97 more, then a refusal.
        served = 0
        while (answer := http_call(port, "/api/v1/startups?limit=3", headers))[0] == 200:
            served += len(answer[1]["data"])
        assert answer[0] == 429
        assert served == 97


def _ignore_errors(call, *args):
    try:
        call(*args)
    except (OSError, ValueError):
        pass  # the worker was killed under this request


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@skip_behind_pgbouncer  # no session SET there: the timeout belongs to the role
@pytest.mark.django_db(transaction=True)
def test_connections_opened_by_web_requests_carry_the_statement_timeout(client, settings):
    """A slow statement is cancelled by PostgreSQL itself at the request deadline."""
    connection.close()
    assert client.get("/api/v1/startups").status_code == 200  # opens the connection
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == f"{settings.DB_REQUEST_DEADLINE_SECONDS}s"


def test_after_a_redis_failure_requests_stop_waiting_on_redis_for_a_while(settings):
    """A Redis that accepts and never answers: the first call waits its socket timeout, the
    next ones fail at once while the breaker is open, and one call tries again after it."""
    from django.core.cache import cache

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    try:
        settings.REDIS_BREAKER_SECONDS = 1
        settings.CACHES = {"default": redis_cache(f"redis://127.0.0.1:{silent.getsockname()[1]}/0")}

        def timed_get() -> float:
            started = time.monotonic()
            assert cache.get("anything") is None  # a miss, never an error
            return time.monotonic() - started

        assert 0.2 <= timed_get() < 1  # one socket timeout (REDIS_TIMEOUT_MS)
        assert max(timed_get() for _ in range(20)) < 0.05  # the breaker is open
        time.sleep(1.1)
        assert timed_get() >= 0.2  # half-open: one call tries Redis again
    finally:
        silent.close()


def test_the_deadline_thread_is_not_woken_by_every_request_yet_fires_a_sooner_deadline():
    """Every request arms a deadline; waking the watchdog thread for each one cost a thread
    switch per request (a quarter of the cheapest requests' throughput). Only a deadline
    sooner than the one the thread sleeps until wakes it."""
    from core.dbdeadline import _Watch, _Watchdog

    class Unconnected:
        connection = None

    watchdog = _Watchdog()
    wakes = []
    notify = watchdog._cond.notify
    watchdog._cond.notify = lambda *args: (wakes.append(1), notify(*args))
    for _ in range(500):  # 500 requests, each with the usual deadline
        watch = _Watch(time.monotonic() + 5, [Unconnected()])
        watchdog.arm(watch)
        watchdog.disarm(watch)
    assert len(wakes) <= 2
    soon = _Watch(time.monotonic() + 0.05, [Unconnected()])
    watchdog.arm(soon)
    waited = time.monotonic()
    while not soon.expired and time.monotonic() - waited < 3:
        time.sleep(0.01)
    assert soon.expired


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@skip_behind_pgbouncer  # the proxy would count PgBouncer's round trips, not the app's
@pytest.mark.django_db(transaction=True)
def test_a_cached_answer_is_one_round_trip_and_a_killed_kept_connection_is_replaced():
    """The generation-token query is also the request's connection health check: a cached
    /api/ai answer is one round trip to PostgreSQL (Django's CONN_HEALTH_CHECKS alone sends
    `SELECT 1` first, a second round trip on every request), and a kept connection that the
    server dropped between requests is still replaced without an error."""
    make_ai_startup(name="Kept", slug="kept", mrr=10)
    env = {
        "READ_CACHE_SECONDS": "300",
        "GUNICORN_ACCESS_LOG": "",
        "LOG_LEVEL": "CRITICAL",
        # The token read per request, as behind PgBouncer or for a request with a key (an
        # anonymous one otherwise takes it from the watch: tests/core/test_tokenwatch.py).
        "READ_TOKEN_WATCH": "0",
        # One thread, so one kept connection: with four, a thread first used inside the
        # counted requests opens its connection there (start-up and session set-up are
        # round trips too) and the count depends on which thread the poller picked.
        "GUNICORN_THREADS": "1",
    }
    with gunicorn_behind_proxy(env) as (proxy, port):
        for _ in range(3):  # the answer is cached, the connection kept
            assert http_get(port, "/api/ai/discovery")[0] == 200
        before = proxy.sends
        for _ in range(40):
            assert http_get(port, "/api/ai/discovery")[0] == 200
        # One round trip each (the tokens), and once per connection the statement's
        # preparation (psycopg sends it on the statement's 5th use).
        assert proxy.sends - before <= 40 + len(proxy.upstream_ports)
        with connection.cursor() as cursor:  # only gunicorn's, through the proxy
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE client_port = ANY(%s)",
                [proxy.upstream_ports],
            )
            assert cursor.fetchone()[0] >= 1
        time.sleep(0.2)
        for _ in range(3):
            assert http_get(port, "/api/ai/discovery")[0] == 200
