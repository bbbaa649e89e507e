"""A real streaming replica: a new PostgreSQL primary (initdb) and a hot standby made
by `pg_basebackup -R`, both on free loopback ports in a temporary directory, and gunicorn with
DATABASE_URL and DATABASE_REPLICA_URL pointing at them. Three faults of the standby:

- replay paused: a startup unpublished on the primary disappears from every surface at once;
- stopped: every surface answers 200 from the primary and /readyz names the replica;
- frozen (SIGSTOP): every request is answered within the deadline plus a second.

Needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin); with DATABASE_URL on
PostgreSQL their absence is a failure, not a skip. As root the clusters run as `postgres`.
"""

import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from tests.support.processes import ON_POSTGRES, closed_port, gunicorn_server

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 3
SLUG = "replica-probe"

needs_postgres = pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"))
    assert found, "PostgreSQL server binaries are missing under /usr/lib/postgresql/*/bin"
    return Path(found[-1]).parent


class Cluster:
    """One PostgreSQL server in `data`, on `port`, run as `postgres` when we are root."""

    def __init__(self, bin_dir: Path, data: Path, port: int):
        self.bin, self.data, self.port = bin_dir, data, port

    def run(self, *argv: str, timeout: float = 120) -> str:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        done = subprocess.run(
            [*prefix, *argv], capture_output=True, text=True, timeout=timeout, cwd="/"
        )
        assert done.returncode == 0, f"{argv[0]} failed: {done.stderr}"
        return done.stdout

    def ctl(self, *args: str) -> str:
        log = self.data.parent / f"{self.data.name}.log"
        return self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(log), *args)

    def start(self) -> None:
        self.ctl("-w", "-o", f"-p {self.port}", "start")

    def stop(self) -> None:
        self.ctl("-w", "-m", "immediate", "stop")

    def sql(self, statement: str, database: str = "openstartup") -> str:
        return self.run(
            str(self.bin / "psql"),
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database),
            *("-v", "ON_ERROR_STOP=1", "-Atc", statement),
        ).strip()

    def pids(self) -> list[int]:
        """The postmaster and every process it started (backends, the startup process)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True
        ).stdout.split()
        return [postmaster, *map(int, children)]

    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/openstartup"


SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = '{sockets}'
shared_buffers = 16MB
max_connections = 40
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = replica
max_wal_senders = 4
hot_standby = on
"""


def _manage(url: str, code: str) -> str:
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": ""}
    env.pop("DATABASE_REPLICA_URL", None)
    done = subprocess.run(
        [sys.executable, "manage.py", *code.split("\0")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _copy_test_database(primary: Cluster) -> None:
    """The migrated test database's schema and rows into the new primary (pg_dump | psql: a
    few seconds, where `migrate` took a minute)."""
    db = connection.settings_dict
    dump = subprocess.run(
        [str(primary.bin / "pg_dump"), "--no-owner", "--no-privileges"]
        + ["-h", db["HOST"] or "127.0.0.1", "-p", str(db["PORT"] or 5432), "-U", db["USER"]]
        + [db["NAME"]],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PGPASSWORD": db["PASSWORD"] or ""},
    )
    assert dump.returncode == 0, dump.stderr
    load = subprocess.run(
        [str(primary.bin / "psql"), "-q", "-v", "ON_ERROR_STOP=1"]
        + ["-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres", "-d", "openstartup"],
        input=dump.stdout,
        capture_output=True,
        timeout=120,
    )
    assert load.returncode == 0, load.stderr


@pytest.fixture(scope="module")
def clusters(django_db_setup, django_db_blocker) -> Iterator[tuple[Cluster, Cluster]]:
    bin_dir = _bin_dir()
    base = Path(tempfile.mkdtemp(prefix="replica-"))
    if os.geteuid() == 0:
        postgres = pwd.getpwnam("postgres")
        os.chown(base, postgres.pw_uid, postgres.pw_gid)
    primary = Cluster(bin_dir, base / "primary", closed_port())
    standby = Cluster(bin_dir, base / "standby", closed_port())
    started: list[Cluster] = []
    try:
        primary.run(
            str(bin_dir / "initdb"),
            *("-D", str(primary.data), "-U", "postgres", "-A", "trust", "--no-sync"),
        )
        with open(primary.data / "postgresql.conf", "a") as conf:
            conf.write(SETTINGS.format(sockets=base))
        primary.start()
        started.append(primary)
        primary.sql("CREATE DATABASE openstartup", database="postgres")
        with django_db_blocker.unblock():
            _copy_test_database(primary)
        primary.run(
            str(bin_dir / "pg_basebackup"),
            *("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
            *("-D", str(standby.data), "-R", "-X", "stream", "--no-sync", "-c", "fast"),
        )
        standby.start()
        started.append(standby)
        yield primary, standby
    finally:
        for cluster in reversed(started):
            for pid in cluster.pids() if (cluster.data / "postmaster.pid").exists() else []:
                os.kill(pid, signal.SIGCONT)
            try:
                cluster.stop()
            except AssertionError:
                pass
        shutil.rmtree(base, ignore_errors=True)


def _wait_until_replayed(primary: Cluster, standby: Cluster) -> None:
    target = primary.sql("SELECT pg_current_wal_lsn()")
    for _ in range(200):
        if standby.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") == "t":
            return
        time.sleep(0.05)
    raise AssertionError("the standby never replayed the primary's writes")


def _call(port: int, path: str, body: dict | None = None) -> tuple[int, bytes, float]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/html"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE + 20) as response:  # noqa: S310
            status, content = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, content = error.code, error.read()
    except TimeoutError:
        status, content = 0, b""
    return status, content, time.monotonic() - started


def _mcp(tool: str, slug: str) -> dict:
    params = {"name": tool, "arguments": {"slug": slug}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


SURFACES = {
    "html": lambda s: (f"/startups/{s}", None),
    "markdown": lambda s: (f"/startups/{s}.md", None),
    "badge": lambda s: (f"/startups/{s}/badge.svg", None),
    "history": lambda s: (f"/api/v1/startups/{s}/history", None),
    "rest": lambda s: (f"/api/v1/startups/{s}", None),
    "ai": lambda s: (f"/api/ai/startups/{s}", None),
    "mcp": lambda s: ("/api/mcp", _mcp("get_startup", s)),
    "mcp_history": lambda s: ("/api/mcp", _mcp("get_startup_history", s)),
}


def surfaces(port: int, slug: str) -> dict[str, tuple[str | int, float]]:
    """Each surface's answer for `slug`: "shown", "gone" or the unexpected status, and seconds."""
    answers = {}
    for name, make in SURFACES.items():
        path, body = make(slug)
        status, content, seconds = _call(port, path, body)
        if body is not None and status == 200:
            result = json.loads(content).get("result") or {}
            answers[name] = ("shown" if result.get("isError") is False else "gone", seconds)
        else:
            answers[name] = ({200: "shown", 404: "gone"}.get(status, status), seconds)
    return answers


def states(answers: dict) -> dict:
    return {name: state for name, (state, _) in answers.items()}


@pytest.fixture(scope="module")
def server(clusters) -> Iterator[int]:
    primary, standby = clusters
    _manage(
        primary.url(),
        "shell\0-c\0from tests.support.factories import make_ai_startup; "
        f"make_ai_startup(name='Replica Probe', slug='{SLUG}', mrr=700)",
    )
    _wait_until_replayed(primary, standby)
    env = {
        "DATABASE_URL": primary.url(),
        "DATABASE_REPLICA_URL": standby.url(),
        "DB_REQUEST_DEADLINE_SECONDS": str(DEADLINE),
        "DB_CONNECT_TIMEOUT": str(DEADLINE),
        "REPLICA_BREAKER_SECONDS": "2",
        "REDIS_URL": "",
        "GUNICORN_ACCESS_LOG": "",
        "FAIR_USE_REQUESTS_PER_MINUTE": "100000",
    }
    with gunicorn_server(env, workers=1) as port:
        yield port


@needs_postgres
def test_a_frozen_replica_never_holds_a_request_past_its_deadline(clusters, server):
    """SIGSTOP on every process of the standby: it accepts connections (the kernel does) and
    never answers. Requests used to hang with no end (12 with no answer after 40 s)."""
    _, standby = clusters
    assert set(states(surfaces(server, SLUG)).values()) == {"shown"}
    pids = standby.pids()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        for _ in range(2):
            answers = surfaces(server, SLUG)
            slow = {name: s for name, (_, s) in answers.items() if s > DEADLINE + 1}
            assert not slow, answers
            assert set(states(answers).values()) == {"shown"}, answers
        status, content, seconds = _call(server, "/readyz")
        assert seconds < 2 * 2 + 1, seconds
        assert json.loads(content)["checks"]["replica"] == "down"
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


@needs_postgres
def test_a_stopped_replica_is_skipped_and_readyz_names_it(clusters, server):
    """The standby stopped: history, the HTML profile, .md, badge and MCP history used to
    answer 503 while /readyz said ready."""
    primary, standby = clusters
    standby.stop()
    try:
        for _ in range(2):
            answers = surfaces(server, SLUG)
            assert states(answers) == dict.fromkeys(SURFACES, "shown"), answers
            assert all(seconds < DEADLINE + 1 for _, seconds in answers.values()), answers
        status, content, _ = _call(server, "/readyz")
        body = json.loads(content)
        assert (status, body["checks"]["replica"], body["checks"]["database"]) == (
            200,
            "down",
            "ok",
        )
    finally:
        standby.start()
    _wait_until_replayed(primary, standby)


@needs_postgres
def test_with_replay_paused_an_unpublished_startup_is_gone_everywhere_at_once(clusters, server):
    """Replay paused on the standby, the startup unpublished on the primary: every surface says
    404 on the very next request (the HTML profile, .md, badge and history used to keep it,
    and the page cache kept it 180 s more after replay resumed)."""
    primary, standby = clusters
    time.sleep(2.5)  # any breaker left open by an earlier test has closed
    _wait_until_replayed(primary, standby)
    assert states(surfaces(server, SLUG)) == dict.fromkeys(SURFACES, "shown")
    standby.sql("SELECT pg_wal_replay_pause()")
    try:
        _manage(
            primary.url(),
            "shell\0-c\0from startups.models import Startup; "
            f"s = Startup.objects.get(slug='{SLUG}'); s.is_published = False; s.save()",
        )
        assert states(surfaces(server, SLUG)) == dict.fromkeys(SURFACES, "gone")
    finally:
        standby.sql("SELECT pg_wal_replay_resume()")
    _wait_until_replayed(primary, standby)
    assert states(surfaces(server, SLUG)) == dict.fromkeys(SURFACES, "gone")


@pytest.mark.django_db
def test_public_pages_are_keyed_by_the_data_token_not_kept_by_the_clock(client, settings):
    """Public pages are kept under the data token, not for a fixed time: an unpublished
    startup leaves its HTML profile, .md and badge on the next request."""
    from tests.support.factories import make_startup

    settings.PUBLIC_PAGE_CACHE_SECONDS = 180
    startup = make_startup(name="Kept Page", slug="kept-page", mrr=300)
    paths = ["/startups/kept-page", "/startups/kept-page.md", "/startups/kept-page/badge.svg"]
    assert [client.get(path).status_code for path in paths] == [200, 200, 200]
    startup.is_published = False
    startup.save()
    assert [client.get(path).status_code for path in paths] == [404, 404, 404]


def test_lag_is_measured_from_the_replay_position_and_opens_the_breaker(monkeypatch, settings):
    """Lagging: a primary position seen more than REPLICA_MAX_LAG_SECONDS ago is still not
    replayed. A replica that keeps replaying what it was asked to is never called lagging."""
    from core import replica

    clock = [1000.0]
    monkeypatch.setattr(replica.time, "monotonic", lambda: clock[0])
    settings.REPLICA_MAX_LAG_SECONDS = 1
    breaker = replica.ReplicaBreaker()
    assert breaker.observe(100, 100) is True
    assert breaker.observe(200, 150) is False  # behind: this request reads the primary
    clock[0] += 0.8
    assert breaker.observe(260, 210) is False  # replayed 200 meanwhile: a new position to wait for
    clock[0] += 0.8
    assert breaker.observe(300, 250) is False and not breaker.is_open()  # 260 seen 0.8 s ago
    clock[0] += 0.5
    assert breaker.observe(320, 255) is False and breaker.is_open()  # 260 pending for 1.3 s
    clock[0] += settings.REPLICA_BREAKER_SECONDS + 0.1
    assert not breaker.is_open() and breaker.observe(400, 400) is True


OFFLOAD = "offload-probe"
# A visible write recorded in the change sequence, as every write path does (the data token
# then names the write's sequence number).
RECORDED_WRITE = (
    "shell\0-c\0from django.db import transaction\n"
    "from startups.changes import startup_change_record\n"
    "from tests.support.factories import make_ai_startup, make_user\n"
    "from startups.models import Startup\n"
    "with transaction.atomic():\n"
    "    s = Startup.objects.filter(slug='{slug}').first()\n"
    "    if s is None:\n"
    "        s = make_ai_startup(\n"
    "            name='Offload Probe', slug='{slug}', mrr={mrr},\n"
    "            owner=make_user(username='offload', email='offload@example.com'))\n"
    "    s.mrr = {mrr}\n"
    "    s.save()\n"
    "    startup_change_record(startup=s, fields=['mrr'])\n"
)

# The dataset surfaces the read cache fills: list, REST detail, AI profile, MCP profile.
FILLED = {
    "list": lambda s: ("/api/v1/startups?limit=100", None),
    "rest": lambda s: (f"/api/v1/startups/{s}", None),
    "ai": lambda s: (f"/api/ai/startups/{s}", None),
    "mcp": lambda s: ("/api/mcp", _mcp("get_startup", s)),
}


def _mrr_in(document) -> int | None:
    """The first `mrr` in a JSON document, however deep (each surface has its own shape)."""
    if isinstance(document, dict):
        if isinstance(document.get("mrr"), int):
            return document["mrr"]
        document = list(document.values())
    if isinstance(document, list):
        for item in document:
            if (found := _mrr_in(item)) is not None:
                return found
    return None


def mrr_shown(port: int, slug: str) -> dict[str, int | None]:
    """The MRR each filled surface shows for `slug` (None: not shown)."""
    shown = {}
    for name, make in FILLED.items():
        path, body = make(slug)
        status, content, _ = _call(port, path, body)
        found = json.loads(content) if status == 200 else {}
        if name == "list":
            found = [row for row in found.get("data", []) if row.get("slug") == slug]
        elif name == "mcp":
            result = found.get("result") or {}
            found = {} if result.get("isError") else result.get("structuredContent")
        shown[name] = _mrr_in(found)
    return shown


def startup_reads(cluster: Cluster) -> int:
    """How many scans of the startups table this server has run (its own statistics: the
    standby keeps them for the queries it answers). A session reports its counts when it
    ends, so the server's client sessions are ended first (the service reconnects)."""
    cluster.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    time.sleep(0.3)  # the ended sessions have reported
    return int(
        cluster.sql(
            "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables"
            " WHERE relname = 'startups_startup'"
        )
    )


def replayed_sequence(standby: Cluster) -> int:
    return int(standby.sql("SELECT coalesce(max(id), 0) FROM startups_change"))


@needs_postgres
@pytest.mark.django_db(transaction=True)  # the migrated test database the clusters copy
def test_filled_copies_come_from_the_primary_while_replay_lags_then_from_the_replica(
    clusters, server
):
    """The read cache used to fill every copy (list, detail, AI, MCP) from the primary, so
    the replica took none of that load. A copy may come from the replica once the replica has
    replayed the write behind the data token, and must come from the primary before that."""
    primary, standby = clusters
    time.sleep(2.5)  # any breaker left open by an earlier test has closed
    _wait_until_replayed(primary, standby)
    standby.sql("SELECT pg_wal_replay_pause()")
    try:
        _manage(primary.url(), RECORDED_WRITE.format(slug=OFFLOAD, mrr=900))
        sequence = int(
            primary.sql("SELECT token FROM openstartup_generation WHERE kind = 'data'").split(".")[
                1
            ]
        )
        assert replayed_sequence(standby) < sequence  # the replica has not seen the write
        # A new startup: every filled surface shows it at once, read from the primary.
        assert mrr_shown(server, OFFLOAD) == dict.fromkeys(FILLED, 900)
    finally:
        standby.sql("SELECT pg_wal_replay_resume()")
    _wait_until_replayed(primary, standby)
    time.sleep(2.5)  # the lag during the pause opened the breaker for 2 s
    _manage(primary.url(), RECORDED_WRITE.format(slug=OFFLOAD, mrr=1200))
    _wait_until_replayed(primary, standby)
    before = startup_reads(primary), startup_reads(standby)
    assert mrr_shown(server, OFFLOAD) == dict.fromkeys(FILLED, 1200)
    after = startup_reads(primary), startup_reads(standby)
    # The copies were filled from the replica, and the primary read no startup for them.
    assert after[1] > before[1], (before, after)
    assert after[0] == before[0], (before, after)
