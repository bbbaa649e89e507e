"""What reads where, measured: PostgreSQL CPU per request on the primary and on a streaming
replica, for the dataset reads the read cache fills (list, REST detail, AI profile, MCP).

    .venv/bin/python bench/replica.py

Builds its own primary (initdb, `migrate`, bench/seed.py's demo dataset of
BENCH_REPLICA_COUNT startups) and a hot standby of it (`pg_basebackup -R`), each on a free
loopback port in a temporary directory (as root, the clusters run as `postgres`), then runs
gunicorn (2 workers, gunicorn.conf.py otherwise; no Redis, so every process fills its own
copies) twice, the same load each time:

- "primary only": DATABASE_REPLICA_URL unset, everything reads the primary;
- "with replica": DATABASE_REPLICA_URL set; the read cache fills from the replica once it has
  replayed the write behind the data token (core/replica.py).

The load: BENCH_REPLICA_CLIENTS keep-alive clients for BENCH_REPLICA_SECONDS, each request
drawn at random from a list page (minMrr log-uniform, page 1-50), a REST detail, an AI
profile and an MCP get_startup of a random startup, so nearly every request misses the copies
and fills; all with one Pro key (metering writes its counters to the primary, as in
service). A cluster's CPU is the user+system time of its postmaster and every process it
started (ended ones included: the postmaster's reaped-children time), read from /proc before
and after the load; per request means divided by the requests answered. Prints one Markdown
table (the figures docs/deployment.md quotes); the clusters are removed at the end.

Environment (all optional): BENCH_REPLICA_COUNT (20000), BENCH_REPLICA_SECONDS (20),
BENCH_REPLICA_CLIENTS (8).
"""

# ruff: noqa: S311, S603, S607 (a local operator script: fixed commands, which startup to ask)

import glob
import http.client
import json
import math
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNT = int(os.environ.get("BENCH_REPLICA_COUNT") or 20000)
SECONDS = float(os.environ.get("BENCH_REPLICA_SECONDS") or 20)
CLIENTS = int(os.environ.get("BENCH_REPLICA_CLIENTS") or 8)
TICKS = os.sysconf("SC_CLK_TCK")
SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = '{sockets}'
shared_buffers = 128MB
max_connections = 60
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = replica
max_wal_senders = 4
hot_standby = on
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    def __init__(self, bin_dir: Path, data: Path):
        self.bin, self.data, self.port = bin_dir, data, free_port()

    def run(self, *argv: str) -> str:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, cwd="/")
        if done.returncode:
            raise SystemExit(f"{argv[0]} failed: {done.stderr}")
        return done.stdout

    def ctl(self, *args: str) -> None:
        log = self.data.parent / f"{self.data.name}.log"
        self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(log), *args)

    def sql(self, statement: str, database: str = "openstartup") -> str:
        return self.run(
            str(self.bin / "psql"),
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database),
            *("-v", "ON_ERROR_STOP=1", "-Atc", statement),
        ).strip()

    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/openstartup"

    def cpu_seconds(self) -> float:
        """User+system seconds of the postmaster, its ended children and its live ones."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True
        ).stdout.split()
        total = _ticks(postmaster, with_children=True)
        total += sum(_ticks(int(pid), with_children=False) for pid in children)
        return total / TICKS


def _ticks(pid: int, *, with_children: bool) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        return 0  # ended meanwhile: counted in its parent's reaped-children time
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return utime + stime + (cutime + cstime if with_children else 0)


def manage(url: str, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": ""}
    env.pop("DATABASE_REPLICA_URL", None)
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    return done.stdout


def build_clusters(base: Path) -> tuple[Cluster, Cluster]:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"))
    if not found:
        raise SystemExit("PostgreSQL server binaries are missing under /usr/lib/postgresql")
    bin_dir = Path(found[-1]).parent
    primary, standby = Cluster(bin_dir, base / "primary"), Cluster(bin_dir, base / "standby")
    primary.run(
        str(bin_dir / "initdb"),
        *("-D", str(primary.data), "-U", "postgres", "-A", "trust", "--no-sync"),
    )
    with open(primary.data / "postgresql.conf", "a") as conf:
        conf.write(SETTINGS.format(sockets=base))
    primary.ctl("-w", "-o", f"-p {primary.port}", "start")
    primary.sql("CREATE DATABASE openstartup", database="postgres")
    print(f"migrate, then seed {COUNT:,} startups ...", flush=True)
    manage(primary.url(), "migrate", "--no-input")
    manage(primary.url(), "shell", "-c", f"from bench.seed import seed; seed({COUNT})")
    primary.sql("VACUUM ANALYZE")
    primary.run(
        str(bin_dir / "pg_basebackup"),
        *("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
        *("-D", str(standby.data), "-R", "-X", "stream", "--no-sync", "-c", "fast"),
    )
    standby.ctl("-w", "-o", f"-p {standby.port}", "start")
    return primary, standby


def requests_of(slugs: list[str], ai_slugs: list[str]):
    """One random request: (method, path, body)."""
    kind = random.choice(("list", "detail", "ai", "mcp"))
    if kind == "list":
        mrr = math.floor(math.exp(random.random() * math.log(100_000)))
        return "GET", f"/api/v1/startups?minMrr={mrr}&page={random.randint(1, 50)}", None
    if kind == "detail":
        return "GET", f"/api/v1/startups/{random.choice(slugs)}", None
    if kind == "ai":
        return "GET", f"/api/ai/startups/{random.choice(ai_slugs)}", None
    call = {"name": "get_startup", "arguments": {"slug": random.choice(ai_slugs)}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    return "POST", "/api/mcp", json.dumps(body)


def load(port: int, slugs: list[str], ai_slugs: list[str], key: str, seconds: float) -> Counter:
    statuses: Counter = Counter()
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: Counter = Counter()
        while time.monotonic() < stop:
            method, path, body = requests_of(slugs, ai_slugs)
            headers = {"Content-Type": "application/json", "X-API-Key": key}
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                mine[response.status] += 1
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException) as error:
                mine[f"error {type(error).__name__}"] += 1
                conn.close()
        with lock:
            statuses.update(mine)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def gunicorn(env: dict[str, str], port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "openstartup.wsgi"]
        + ["--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=open(Path(tempfile.gettempdir()) / "bench-replica-gunicorn.log", "w"),  # noqa: SIM115
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    raise SystemExit("gunicorn did not start")


def measure(name: str, env: dict, clusters: dict[str, Cluster], pools: tuple) -> dict:
    port = free_port()
    server = gunicorn(env, port)
    try:
        load(port, *pools, seconds=3)  # warm up: imports, connections, the rank index
        before = {label: cluster.cpu_seconds() for label, cluster in clusters.items()}
        started = time.monotonic()
        statuses = load(port, *pools, seconds=SECONDS)
        elapsed = time.monotonic() - started
        after = {label: cluster.cpu_seconds() for label, cluster in clusters.items()}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    answered = sum(count for status, count in statuses.items() if isinstance(status, int))
    row = {"mode": name, "requests": answered, "rps": answered / elapsed, "statuses": statuses}
    for label in clusters:
        row[label] = 1000 * (after[label] - before[label]) / max(answered, 1)
    print(json.dumps({**row, "statuses": dict(statuses)}, default=str), flush=True)
    return row


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-replica-"))
    if os.geteuid() == 0:
        postgres = pwd.getpwnam("postgres")
        os.chown(base, postgres.pw_uid, postgres.pw_gid)
    primary = standby = None
    try:
        primary, standby = build_clusters(base)
        slugs = primary.sql("SELECT slug FROM startups_startup WHERE is_published").split()
        ai_slugs = primary.sql(
            "SELECT slug FROM startups_startup WHERE is_published AND ai_addon_active"
        ).split()
        key = (
            manage(primary.url(), "create_api_key", "bench-pro@example.com", "--plan", "pro")
            .strip()
            .splitlines()[-1]
        )
        pools = (slugs, ai_slugs or slugs, key)
        common = {
            "DATABASE_URL": primary.url(),
            "REDIS_URL": "",
            "GUNICORN_ACCESS_LOG": "",
            "FAIR_USE_REQUESTS_PER_MINUTE": "0",
            "LOG_LEVEL": "WARNING",
        }
        clusters = {"primary": primary, "replica": standby}
        rows = [
            measure("primary only", common, clusters, pools),
            measure(
                "with replica", {**common, "DATABASE_REPLICA_URL": standby.url()}, clusters, pools
            ),
        ]
        print(f"\n{COUNT:,} startups, {CLIENTS} clients, {SECONDS:g} s per row, 2 workers\n")
        print("| mode | requests/s | primary CPU ms/request | replica CPU ms/request |")
        print("|---|---:|---:|---:|")
        for row in rows:
            print(
                f"| {row['mode']} | {row['rps']:.0f} | {row['primary']:.2f} "
                f"| {row['replica']:.2f} |"
            )
    finally:
        for cluster in (standby, primary):
            if cluster is not None and (cluster.data / "postmaster.pid").exists():
                try:
                    cluster.ctl("-w", "-m", "immediate", "stop")
                except SystemExit:
                    pass
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
