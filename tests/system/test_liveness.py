"""The probes against the real gunicorn while every request thread waits on a stalled
PostgreSQL: liveness must not queue behind the requests (an orchestrator would restart a
healthy process), and readiness must say which database failed within its own deadline."""

import threading
import time
import urllib.request

import pytest

from core import dbdeadline
from core.gunicorn_worker import probe_of
from tests.support.factories import make_startup
from tests.support.processes import ON_POSTGRES, gunicorn_behind_proxy, http_get

DEADLINE = 3


def stalled_env(*, deadline: int, threads: int, **more: str) -> dict[str, str]:
    """gunicorn's environment for these tests: `threads` request threads whose database
    work (connecting included) ends after `deadline` seconds, no Redis, no access log."""
    return {
        "DB_REQUEST_DEADLINE_SECONDS": str(deadline),
        "DB_CONNECT_TIMEOUT": str(deadline),
        "GUNICORN_THREADS": str(threads),
        "REDIS_URL": "",
        "GUNICORN_ACCESS_LOG": "",
        **more,
    }


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_healthz_answers_within_a_second_while_every_thread_waits_on_the_database():
    make_startup(name="Stalled", mrr=5)
    env = stalled_env(deadline=DEADLINE, threads=4, FAIR_USE_REQUESTS_PER_MINUTE="100000")
    with gunicorn_behind_proxy(env, workers=1) as (proxy, port):
        assert http_get(port, "/api/v1/startups")[0] == 200
        proxy.mode = "hang"  # PostgreSQL accepts every byte and never answers
        stop = threading.Event()
        answered: list[tuple[int, float]] = []

        def keep_a_thread_busy() -> None:
            while not stop.is_set():
                status, _, seconds = http_get(port, "/api/v1/startups?page=1")
                answered.append((status, seconds))

        # Twice as many clients as threads: every thread waits on the database and as many
        # requests queue behind them, for the whole time the probes are asked.
        clients = [threading.Thread(target=keep_a_thread_busy) for _ in range(8)]
        for client in clients:
            client.start()
        try:
            time.sleep(0.5)
            live = []
            for _ in range(10):
                status, body, seconds = http_get(port, "/healthz")
                live.append((status, body, round(seconds, 3)))
                time.sleep(0.3)
            status, body, seconds = http_get(port, "/readyz")
            ready = (status, body["checks"]["database"], seconds)
        finally:
            stop.set()
            for client in clients:
                client.join(timeout=30)
        proxy.mode = "pass"
        assert all(s == 200 and b == {"status": "ok"} and t < 1 for s, b, t in live), live
        assert ready[:2] == (503, "down"), ready
        assert ready[2] < dbdeadline.READYZ_DEADLINE_SECONDS + 1, ready
        # The requests were really held by the database (each answered 503 at its deadline).
        assert len(answered) >= 8 and {status for status, _ in answered} == {503}, answered


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_healthz_fails_when_every_thread_is_stuck_past_the_worker_timeout():
    """Liveness must not say "alive" for a worker that serves nothing: with every request
    thread held longer than GUNICORN_TIMEOUT (a deadline above it, which production never
    sets), /healthz waits behind them like any request and the probe times out."""
    make_startup(name="Wedged", mrr=5)
    env = stalled_env(deadline=12, threads=2, GUNICORN_TIMEOUT="2")
    with gunicorn_behind_proxy(env, workers=1) as (proxy, port):
        assert http_get(port, "/api/v1/startups")[0] == 200
        proxy.mode = "hang"
        clients = [
            threading.Thread(target=http_get, args=(port, "/api/v1/startups?page=1"))
            for _ in range(2)
        ]
        for client in clients:
            client.start()
        try:
            status, _, seconds = http_get(port, "/healthz")
            assert (status, seconds < 1) == (200, True)  # stuck for less than the timeout
            time.sleep(3)
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)  # noqa: S310
            assert time.monotonic() - started >= 2
        finally:
            proxy.mode = "pass"
            for client in clients:
                client.join(timeout=30)


def test_only_bodiless_get_and_head_of_the_probe_paths_take_the_probe_threads():
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    assert probe_of(head) == "live"
    assert probe_of(head.replace(b"GET", b"HEAD")) == "live"
    assert probe_of(b"GET /healthz?full=1 HTTP/1.1\r\nHost: x\r\n\r\n") == "live"
    assert probe_of(b"GET /readyz HTTP/1.0\r\n\r\n") == "ready"
    assert probe_of(b"POST /healthz HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}") is None
    assert probe_of(b"GET /healthz HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}") is None
    assert probe_of(b"GET /healthz/x HTTP/1.1\r\n\r\n") is None
    assert probe_of(b"GET /api/v1/startups HTTP/1.1\r\n\r\n") is None
