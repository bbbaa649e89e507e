"""Helpers for tests that start other processes (`manage.py`, gunicorn) on this test run's
database: a real gunicorn on a free loopback port, a TCP proxy in front of PostgreSQL that can
go away and come back, and plain HTTP calls to them."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith("postgres")


def skip_unless_the_database_can_be_shared() -> None:
    if connection.vendor == "sqlite" and "memory" in str(connection.settings_dict["NAME"]):
        pytest.skip("an in-memory SQLite test database cannot be shared with other processes")


def process_env() -> dict[str, str]:
    """Environment pointing a process at this test run's database."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
        env["DATABASE_URL"] = f"postgres://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    else:
        env["SQLITE_PATH"] = str(db["NAME"])
    return env


def run_to_the_end(argv: list[str], *, cwd, env: dict[str, str] | None, timeout: float) -> str:
    """Run `argv` to its end: it must exit 0 (else its stderr is shown). Returns its stdout."""
    run = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr
    return run.stdout


# The suite runs through PgBouncer in transaction mode in CI too (.ci/pgbouncer-pass): there
# the app sends no session `SET` and prepares no statements (docs/deployment.md, PgBouncer).
BEHIND_PGBOUNCER = os.environ.get("PGBOUNCER_TRANSACTION_MODE", "").lower() in ("1", "true", "yes")
skip_behind_pgbouncer = pytest.mark.skipif(
    BEHIND_PGBOUNCER, reason="not so behind PgBouncer in transaction mode (by design)"
)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


class TcpProxy:
    """A loopback TCP forwarder that can be stopped and started: a PostgreSQL that goes away
    and comes back, without touching the real server other people use."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = closed_port()
        # "pass" forwards; "hang" accepts and holds every byte (a server that never answers);
        # "slow" delays every chunk by `delay` seconds (a slow network round trip).
        self.mode = "pass"
        self.delay = 2.0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self.sends = 0  # chunks forwarded to the server: about one per round trip
        self.upstream_ports: list[int] = []  # the server sees these as its clients' ports

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.upstream_ports.append(upstream.getsockname()[1])
            self._sockets += [client, upstream]
            for a, b, up in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pipe, args=(a, b, up), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, up: bool = False) -> None:
        try:
            while data := source.recv(65536):
                self.sends += up
                while self.mode == "hang":
                    time.sleep(0.05)
                if self.mode == "slow":
                    time.sleep(self.delay)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass


@contextmanager
def proxied_database() -> Iterator[tuple[TcpProxy, str]]:
    """A started TcpProxy in front of the test database, and the DATABASE_URL through it;
    on the way out the proxy lets everything through, stops, and the sessions it carried
    are waited for (the test database is dropped at teardown)."""
    db = connection.settings_dict
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)))
    proxy.start()
    try:
        yield proxy, f"postgres://{db['USER']}@127.0.0.1:{proxy.port}/{db['NAME']}"
    finally:
        proxy.mode = "pass"
        proxy.stop()
        wait_for_other_sessions_to_end()


def http_call(port: int, path: str, headers: dict[str, str] | None = None) -> tuple:
    """GET from a local server: (status, JSON body, seconds taken, response headers)."""
    started = time.monotonic()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            status, body, found = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, body, found = error.code, error.read(), error.headers
    return status, json.loads(body), time.monotonic() - started, found


def http_get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict, float]:
    """GET from a local server: (status, JSON body, seconds taken)."""
    return http_call(port, path, headers)[:3]


def gunicorn_config(env: dict[str, str] | None = None) -> dict[str, str]:
    """gunicorn's settings as `make run` would start it (gunicorn.conf.py), by name."""
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    out = run_to_the_end(
        [gunicorn, "--print-config", "openstartup.wsgi"], cwd=ROOT, env=env, timeout=60
    )
    return {
        name.strip(): value.strip()
        for name, _, value in (line.partition("=") for line in out.splitlines())
    }


@contextmanager
def gunicorn_server(env: dict[str, str], *, workers: int = 1, access_log: Path | None = None):
    """A real gunicorn on a free loopback port: the real request life cycle. With
    `access_log`, each line is "<worker pid> <status> <path>"."""
    port = closed_port()
    logging_args = (
        ["--access-logfile", str(access_log), "--access-logformat", "%(p)s %(s)s %(U)s"]
        if access_log
        else []
    )
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "openstartup.wsgi"]
        + ["--bind", f"127.0.0.1:{port}", "--workers", str(workers), *logging_args],
        cwd=ROOT,
        env={**os.environ, "WEB_CONCURRENCY": str(workers), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            if not port_free(port):
                break
            time.sleep(0.05)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_for_other_sessions_to_end() -> None:
    """The backends that served the proxied connections exit a moment after the proxy drops
    them; the test database can only be dropped at teardown once they have."""
    for _ in range(100):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.05)


@contextmanager
def gunicorn_behind_proxy(env: dict[str, str], **options) -> Iterator[tuple[TcpProxy, int]]:
    """A real gunicorn (`gunicorn_server`'s options) whose PostgreSQL is reached through a
    started TcpProxy: (the proxy, gunicorn's port)."""
    with proxied_database() as (proxy, url):
        with gunicorn_server({"DATABASE_URL": url, **env}, **options) as port:
            yield proxy, port
