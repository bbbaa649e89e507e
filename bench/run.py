"""`make bench`: the service against a framework floor and a naive implementation, in one run.

PostgreSQL with BENCH_COUNTS startups (each size in its own database), gunicorn with 2 workers (its
gunicorn.conf.py otherwise: worker class, threads) on
127.0.0.1:8480, wrk (8 connections, BENCH_SECONDS per row, BENCH_ROUNDS rounds). Two kinds of
rows: "repeated" rows send one URL again and again (what caches help), "varied" rows give every
request its own values (bench/varied.lua: minMrr, page, q, category, slug, cursor), which no
cache helps; every round of the repeated rows runs before the first varied row. Prints
requests/s, p50 and p99 per row, checks the targets of issues 5 and 19, and writes
bench/results.md (one column group per dataset size, side by side).

Environment (all optional):

    BENCH_COUNTS        100000 (comma-separated sizes: `100000,1000000` runs both, in order)
    BENCH_COUNT         one size (the same as BENCH_COUNTS with one value)
    BENCH_DATABASE_URL  postgres://postgres@127.0.0.1:5432/openstartup_bench (a size other than
                        100,000 gets its own database: `..._bench_1000000`)
    BENCH_REDIS_URL     redis://127.0.0.1:6379/9
    BENCH_PORT          8480
    BENCH_SECONDS       5 (per row and round)
    BENCH_ROUNDS        3 (each figure is the median over the rounds)
    BENCH_ROWS          only these rows, e.g. `1,3f,4a` (for iterating; targets need them all)
    BENCH_RESEED        1: seed even when the database already holds the demo dataset of that
                        size (by default it is reused: the seed is deterministic)
    BENCH_BASELINE      a git revision: that revision's own server (its code, its gunicorn
                        settings, its seed_demo, 100,000 startups; a worktree and venv of its
                        own under /tmp) runs beside this one, and every repeated row it has is
                        measured on both, before then after, row by row in the same rounds
                        ("before and after, in one sitting"), reported side by side
    BENCH_WRITES        0: leave out the "under writes" rows (bench/underwrites.py:
                        BENCH_WRITE_RATE, BENCH_EDIT_RATE)
"""

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import redis
import underwrites  # bench/underwrites.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/openstartup_bench"
)
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
PORT = int(os.environ.get("BENCH_PORT", "8480"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
COUNTS = [
    int(c)
    for c in os.environ.get("BENCH_COUNTS", os.environ.get("BENCH_COUNT", "100000")).split(",")
]
ONLY = {row for row in os.environ.get("BENCH_ROWS", "").split(",") if row}
RESEED = os.environ.get("BENCH_RESEED") == "1"
BASELINE = os.environ.get("BENCH_BASELINE", "")
CONNECTIONS = 8
WARMUP_SECONDS = 1
POOL_SIZE = 20_000  # slugs and cursors per pool: far more than a per-process copy keeps warm


def step(message: str) -> None:
    print(f"== {message}", flush=True)


def database_url(count: int) -> str:
    return DATABASE_URL if count == 100_000 else f"{DATABASE_URL}_{count}"


@dataclass(frozen=True)
class Target:
    """A checkout of the service to measure: this one, or the BENCH_BASELINE revision's."""

    root: Path
    python: str
    port: int
    database: str | None = None  # None: the size's own database
    prefix: str = "openstartup-bench"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


CURRENT = Target(ROOT, PY, PORT)


def environment(count: int, target: Target = CURRENT) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "openstartup.settings",
        "DATABASE_URL": target.database or database_url(count),
        "REDIS_URL": REDIS_URL,
        "CACHE_KEY_PREFIX": f"{target.prefix}-{count}",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }


def manage(count: int, *args: str, target: Target = CURRENT) -> str:
    run = subprocess.run(
        [target.python, "manage.py", *args],
        cwd=target.root,
        env=environment(count, target),
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{run.stderr}")
    return run.stdout


def shell(count: int, code: str, target: Target = CURRENT) -> str:
    return manage(count, "shell", "-c", code, target=target)


def ensure_wrk() -> str:
    if not shutil.which("wrk"):
        step("installing wrk (Debian package)")
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=True, capture_output=True)
    return shutil.which("wrk") or sys.exit("wrk is not available")


def ensure_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    server = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(server, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def vacuum(url: str, *tables: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for table in tables:
            if conn.execute("SELECT to_regclass(%s)", [table]).fetchone()[0] is not None:
                conn.execute(f"VACUUM ANALYZE {table}")


def create_key(count: int, email: str, *extra: str, target: Target = CURRENT) -> str:
    return manage(count, "create_api_key", email, *extra, target=target).strip().splitlines()[-1]


def bench_keys(count: int, target: Target = CURRENT) -> tuple[dict, dict]:
    """X-API-Key headers of a Pro key and of a Free key whose operator allowance override is
    big enough for every request of the run (quota accounting stays on the path without
    running out); the month's counters start at zero and the shared cache empty."""
    pro = create_key(
        count, "bench-pro@example.com", "--plan", "pro", "--name", "bench", target=target
    )
    free = create_key(
        count,
        "bench-free@example.com",
        "--plan",
        "free",
        "--allowance",
        "2000000000",
        "--name",
        "bench",
        target=target,
    )
    shell(
        count, "from quota.models import MonthlyUsage; MonthlyUsage.objects.all().delete()", target
    )
    # The quota tables take a write per Free request (and, since issue 17, a hold); a sitting
    # starts from them vacuumed, as PostgreSQL's autovacuum (off on some machines) keeps them.
    vacuum(target.database or database_url(count), "quota_monthlyusage", "quota_quotahold")
    # Nothing another run left in the shared cache answers this one.
    shell(count, "from django.core.cache import cache; cache.clear()", target)
    return {"X-API-Key": pro}, {"X-API-Key": free}


def get(path: str, headers: dict[str, str] | None = None, target: Target = CURRENT) -> dict:
    request = urllib.request.Request(target.base + path, headers=headers or {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def start_server(count: int, target: Target = CURRENT) -> subprocess.Popen:
    env = {
        **environment(count, target),
        "BENCH_VIEWS": "1",
        "WEB_CONCURRENCY": "2",
        # Threads and worker class: each revision's own gunicorn.conf.py (the service as it
        # is deployed: here the threaded worker with 4 threads; a baseline may be sync).
        "GUNICORN_BIND": f"127.0.0.1:{target.port}",
        "GUNICORN_ACCESS_LOG": "",
        "GUNICORN_MAX_REQUESTS": "0",
        # The load generator is one caller sending thousands of requests a second.
        "FAIR_USE_REQUESTS_PER_MINUTE": "0",
    }
    server = subprocess.Popen(
        [str(Path(target.python).parent / "gunicorn"), "openstartup.wsgi"],
        cwd=target.root,
        env=env,
    )
    for _ in range(300):
        try:
            get("/healthz", target=target)
            return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    sys.exit("gunicorn did not come up")


def worker_rss_mb(server: subprocess.Popen) -> list[float]:
    """Resident memory of each gunicorn worker (the master's children), in MB."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    sizes = []
    for pid in children:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                sizes.append(int(line.split()[1]) / 1024)
    return sizes


def median_run(results: list[dict]) -> dict:
    """Each figure's median over the rounds (non-2xx summed: any is a failure)."""
    return {
        "rps": statistics.median(r["rps"] for r in results),
        "p50": statistics.median(r["p50"] for r in results),
        "p99": statistics.median(r["p99"] for r in results),
        "non2xx": sum(r["non2xx"] for r in results),
        "socket_errors": "; ".join(r["socket_errors"] for r in results if r["socket_errors"]),
    }


UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip()).groups()
    return float(value) * UNITS[unit]


@dataclass
class Row:
    key: str
    label: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    script: str | None = None
    args: tuple[str, ...] = ()
    kind: str = "repeated"  # or "varied"
    list_row: bool = False  # a varied list row: the targets of issue 19 apply

    @property
    def name(self) -> str:
        return f"{self.key} {self.label}"


def wrk(wrk_bin: str, row: Row, seconds: int, target: Target = CURRENT) -> dict:
    args = [wrk_bin, "-t2", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    for name, value in row.headers.items():
        args += ["-H", f"{name}: {value}"]
    if row.script:
        args += ["-s", str(ROOT / "bench" / row.script)]
    args.append(target.base + row.path)
    if row.args:
        args += ["--", *row.args]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": rps,
        "p50": p50,
        "p99": p99,
        "non2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


# --- the dataset -------------------------------------------------------------------------------

SEEDED = (
    "from startups.models import Startup;"
    "print(Startup.objects.filter(is_published=True, slug__startswith='').count())"
)


def seed(count: int) -> str:
    url = database_url(count)
    step(f"database {url}")
    ensure_database(url)
    manage(count, "migrate", "--noinput")
    present = int(shell(count, SEEDED).strip().splitlines()[-1])
    if present == count and not RESEED:
        return f"reused the {count:,} demo startups already loaded (BENCH_RESEED=1 reloads)"
    step(f"seeding {count:,} startups")
    started = time.monotonic()
    # bench/seed.py: the demo dataset bulk-loaded with COPY (seed_demo syncs one by one).
    loaded = shell(count, f"from bench.seed import seed; print(seed({count}))")
    seconds = time.monotonic() - started
    return (
        f"loaded {int(loaded.strip().splitlines()[-1]):,} demo startups with bench/seed.py "
        f"in {seconds:.0f} s"
    )


POOLS = """
import random, urllib.parse
from django.db import connection
from demo import seed as demo
from startups.selectors import StartupFilters, after_of, encode_cursor, startup_list
with connection.cursor() as cursor:
    cursor.execute("SELECT slug FROM startups_startup WHERE is_published ORDER BY id")
    slugs = [row[0] for row in cursor.fetchall()]
rng = random.Random(19)
with open(folder + "/slugs.txt", "w") as f:
    f.write("\\n".join(rng.sample(slugs, min(size, len(slugs)))))
words = {w.lower() for w in demo.PREFIXES + demo.SUFFIXES}
words |= {w.lower() for c, _ in demo.CATEGORIES for w in c.split() if w.isalpha()}
with open(folder + "/words.txt", "w") as f:
    f.write("\\n".join(sorted(words)))
with open(folder + "/categories.txt", "w") as f:
    f.write("\\n".join(urllib.parse.quote(c) for c, _ in demo.CATEGORIES))
qs = startup_list(filters=StartupFilters())
for name, start in (("shallow", 0), ("deep", 49_000)):
    rows = qs[start : start + size // 10]
    with open(folder + f"/cursors-{name}.txt", "w") as f:
        f.write("\\n".join(encode_cursor(after_of(s, "mrr-desc")) for s in rows))
"""


def make_pools(count: int, folder: str) -> None:
    shell(count, f"size, folder = {POOL_SIZE}, {folder!r}\n" + POOLS)


def rows_for(pro_h: dict, free_h: dict, top: str, pools: str) -> list[Row]:
    def varied(key, label, mode, base="-", vary="minMrr,page", pool="-", headers=None, path=""):
        return Row(
            key,
            label,
            path or ("/api/v1/startups" if mode in ("list", "cursor") else "/api/v1/startups/"),
            headers if headers is not None else pro_h,
            "varied.lua",
            (mode, base, vary, f"{pools}/{pool}" if pool != "-" else "-"),
            "varied",
            mode in ("list", "cursor"),
        )

    return [
        Row("1", "bare Django view (4 KB JSON)", "/bench/bare"),
        Row("2", "minimal ORM list (no auth/quota/rank)", "/bench/minimal"),
        varied(
            "2d",
            "varied minimal ORM detail (slug; same joins, dicts, JsonResponse)",
            "detail",
            vary="-",
            pool="slugs.txt",
            path="/bench/minimal-detail/",
        ),
        Row("3a", "list, default sort, Pro key", "/api/v1/startups", pro_h),
        Row("3b", "list, default sort, Free key", "/api/v1/startups", free_h),
        Row("3c", "list, q=forge", "/api/v1/startups?q=forge", pro_h),
        Row(
            "3d",
            "list, category=developer&minMrr=1000",
            "/api/v1/startups?category=developer&minMrr=1000",
            pro_h,
        ),
        Row("3e", "list, sort=name-asc&page=500", "/api/v1/startups?sort=name-asc&page=500", pro_h),
        Row("3f", "detail", f"/api/v1/startups/{top}", pro_h),
        Row("3g", "/api/ai/discovery (cached)", "/api/ai/discovery"),
        Row("3h", "MCP tools/call search_startups", "/api/mcp", script="mcp.lua"),
        varied("4a", "varied minMrr+page, mrr-desc, Pro", "list"),
        varied("4b", "varied minMrr+page, mrr-desc, Free", "list", headers=free_h),
        varied("4c", "varied minMrr+page, mrr-asc", "list", "sort=mrr-asc"),
        varied("4d", "varied minMrr+page, name-asc", "list", "sort=name-asc"),
        varied("4e", "varied minMrr+page, name-desc", "list", "sort=name-desc"),
        varied("4f", "varied minMrr+page, growth-desc", "list", "sort=growth-desc"),
        varied("4g", "varied minMrr+page, updated-desc", "list", "sort=updated-desc"),
        varied("4h", "varied q+page", "list", vary="q,page", pool="words.txt"),
        varied("4i", "varied category+page", "list", vary="category,page", pool="categories.txt"),
        varied(
            "4j", "varied cursor, pages 1-2,000", "cursor", vary="limit", pool="cursors-shallow.txt"
        ),
        varied(
            "4k",
            "varied cursor, pages ~4,900-6,900",
            "cursor",
            vary="limit",
            pool="cursors-deep.txt",
        ),
        varied("4l", "varied detail (slug)", "detail", vary="-", pool="slugs.txt"),
        varied("4m", "varied history (slug)", "history", vary="-", pool="slugs.txt"),
        varied(
            "4n",
            "varied MCP search_startups (query)",
            "mcp",
            vary="-",
            pool="words.txt",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            path="/api/mcp",
        ),
    ]


def measure(wrk_bin: str, row: Row, target: Target = CURRENT) -> dict:
    """One recorded run of `row` on `target`: a few requests first (connections, caches),
    then an unrecorded warm-up at the same load (workers, PostgreSQL's buffers)."""
    if row.script is None:
        for _ in range(3):
            get(row.path, row.headers, target=target)
    wrk(wrk_bin, row, WARMUP_SECONDS, target)
    return wrk(wrk_bin, row, SECONDS, target)


def bench_size(wrk_bin: str, count: int, before: Target | None = None) -> dict:
    seed_output = seed(count)
    print(f"   {seed_output}")
    pro_h, free_h = bench_keys(count)
    pools = tempfile.mkdtemp(prefix="openstartup-bench-")
    step(f"value pools in {pools}")
    make_pools(count, pools)
    # Every sitting starts cold, as a deploy of new data would: nothing shared in Redis yet
    # (a rank index another run built under the same data token would otherwise load at once).
    redis.Redis.from_url(REDIS_URL).flushdb()
    step(f"gunicorn, 2 workers, {CURRENT.base}")
    server = start_server(count)
    old_server, old_rows = None, {}
    try:
        top = get("/api/v1/startups?limit=1", pro_h)["data"][0]["slug"]
        rows = [r for r in rows_for(pro_h, free_h, top, pools) if not ONLY or r.key in ONLY]
        runs: dict[str, list[dict]] = {row.key: [] for row in rows}
        if before is not None:
            old_server, old_rows = start_baseline(before, rows)
        runs_before: dict[str, list[dict]] = {key: [] for key in old_rows}
        # Every row once per round, rounds one after the other: a slow spell of this shared
        # machine then lands on all rows alike instead of on whichever row ran during it. The
        # repeated rows' rounds all come before any varied row: only this server runs the
        # varied rows, and a worker that has served them is slower on every path (bench/NOTES.md,
        # "Reading this sitting"), so before and after are measured on servers with the same
        # past.
        order = [
            (round_number, row)
            for kind in ("repeated", "varied")
            for round_number in range(1, ROUNDS + 1)
            for row in rows
            if row.kind == kind
        ]
        for round_number, row in order:
            step(f"{count:,}: round {round_number}/{ROUNDS}, {row.name}")
            if row.key in old_rows:  # the same row on the baseline, just before
                result = measure(wrk_bin, old_rows[row.key], before)
                print(f"   before: {result['rps']:.0f} req/s, p99 {result['p99']:.2f} ms")
                runs_before[row.key].append(result)
            result = measure(wrk_bin, row)
            print(
                f"   {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, "
                f"p99 {result['p99']:.2f} ms, non-2xx {result['non2xx']}"
            )
            runs[row.key].append(result)
        under, writer = measure_under_writes(wrk_bin, count, rows)
        rss = worker_rss_mb(server)
    finally:
        for running in (server, old_server):
            if running is not None:
                running.terminate()
                running.wait(timeout=30)
        shutil.rmtree(pools, ignore_errors=True)
    return {
        "rows": rows,
        "results": {row.key: median_run(runs[row.key]) for row in rows},
        "before": {key: median_run(found) for key, found in runs_before.items() if found},
        "seed": seed_output,
        "rss": rss,
        "under": {key: median_run(found) for key, found in under.items() if found},
        "writer": writer,
    }


def measure_under_writes(wrk_bin: str, count: int, rows: list[Row]) -> tuple[dict, dict]:
    """Every varied row again, ROUNDS rounds, while bench/writes.py writes (issue 32)."""
    varied = [row for row in rows if row.kind == "varied"]
    if not underwrites.ENABLED or not varied:
        return {}, {}
    step(f"{count:,}: the writer (syncs at the production rate, one founder edit a second)")
    writer = underwrites.start(PY, ROOT, environment(count))
    found: dict[str, list[dict]] = {row.key: [] for row in varied}
    try:
        for round_number in range(1, ROUNDS + 1):
            for row in varied:
                step(f"{count:,}: under writes, round {round_number}/{ROUNDS}, {row.name}")
                result = measure(wrk_bin, row)
                print(f"   {result['rps']:.0f} req/s, p99 {result['p99']:.2f} ms")
                found[row.key].append(result)
    finally:
        done = underwrites.stop(writer)
    print(f"   the writer: {done}")
    return found, done


# --- before and after (BENCH_BASELINE) ----------------------------------------------------------


def baseline_target(revision: str) -> Target:
    """That revision in a worktree and venv of its own, on its own database (100,000 startups
    loaded by its own `seed_demo`, reused when already there)."""
    folder = Path(tempfile.gettempdir()) / f"openstartup-bench-{revision}"
    if not folder.exists():
        step(f"baseline {revision}: worktree {folder}")
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(folder), revision], cwd=ROOT, check=True
        )
    venv = folder / ".venv"
    if not (venv / "bin" / "gunicorn").exists():
        step(f"baseline {revision}: venv")
        subprocess.run([PY, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "-r", str(folder / "requirements.txt")],
            check=True,
        )
    target = Target(
        folder,
        str(venv / "bin" / "python"),
        PORT + 1,
        database=f"{DATABASE_URL}_baseline",
        prefix=f"openstartup-bench-baseline-{revision}",
    )
    count = 100_000
    step(f"baseline {revision}: database {target.database}")
    ensure_database(target.database)
    manage(count, "migrate", "--noinput", target=target)
    if int(shell(count, SEEDED, target).strip().splitlines()[-1]) != count or RESEED:
        step(f"baseline {revision}: its seed_demo, {count:,} startups")
        manage(count, "seed_demo", "--count", str(count), target=target)
    return target


def start_baseline(target: Target, rows: list) -> tuple[subprocess.Popen, dict]:
    """The baseline's server and its versions of the repeated rows measured here (same
    paths, its own keys and top slug)."""
    count = 100_000
    pro_h, free_h = bench_keys(count, target)
    step(f"baseline gunicorn, 2 workers, {target.base}")
    server = start_server(count, target)
    top = get("/api/v1/startups?limit=1", pro_h, target=target)["data"][0]["slug"]
    theirs = {row.key: row for row in rows_for(pro_h, free_h, top, "-")}
    mine = {row.key for row in rows if row.kind == "repeated"}
    return server, {key: row for key, row in theirs.items() if key in mine}


# --- the report --------------------------------------------------------------------------------


def main() -> None:
    os.chdir(ROOT)
    wrk_bin = ensure_wrk()
    before = baseline_target(BASELINE) if BASELINE else None
    sizes = {}
    for count in COUNTS:
        sizes[count] = bench_size(wrk_bin, count, before if count == 100_000 else None)
    report(sizes)


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def report(sizes: dict[int, dict]) -> None:
    counts = list(sizes)
    first = sizes[counts[0]]
    rows: list[Row] = first["rows"]
    if ONLY:  # an iteration run: print, keep bench/results.md as the last full run left it
        for count, size in sizes.items():
            for row in rows:
                r = size["results"][row.key]
                b = size["before"].get(row.key)
                print(
                    f"{count:,} {row.name}: {r['rps']:.0f} req/s, p50 {r['p50']:.2f} ms, "
                    f"p99 {r['p99']:.2f} ms, non-2xx {r['non2xx']}"
                    + (f"; before {b['rps']:.0f} req/s = {r['rps'] / b['rps']:.2f}x" if b else "")
                )
            print(f"   worker RSS MB: {', '.join(f'{m:.0f}' for m in size['rss'])}")
            if size["under"]:
                print(
                    "\n".join(
                        underwrites.table(
                            rows, size["results"], size["under"], size["writer"], count
                        )
                    )
                )
        return
    header = "| Row | Path |" + "".join(
        f" {c:,} req/s | p50 ms | p99 ms | vs row 1 | vs row 2 |" for c in counts
    )
    lines = [
        "# Benchmark results",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench` on {platform.node()}: "
        f"{os.cpu_count()} CPUs (wrk, gunicorn and PostgreSQL share them), Python "
        f"{platform.python_version()}, PostgreSQL and Redis on loopback, gunicorn 2 workers "
        "as gunicorn.conf.py configures them (the threaded worker, 4 threads each), wrk 2 "
        f"threads x {CONNECTIONS} connections x {SECONDS} s per row after a "
        f"{WARMUP_SECONDS} s unrecorded warm-up, {ROUNDS} rounds of the repeated rows, then "
        f"{ROUNDS} of the varied rows; each figure is the median over the rounds. Every size "
        "was measured in this one sitting.",
        "",
    ]
    for count, size in sizes.items():
        rss = ", ".join(f"{m:.0f}" for m in size["rss"])
        lines.append(f"- {count:,} startups: {size['seed']}; worker RSS after the run: {rss} MB.")
    lines += ["", header, "|---|---|" + "---:|" * (5 * len(counts))]
    for row in rows:
        cells = f"| {row.name} | `{row.path}` |"
        for count in counts:
            res = sizes[count]["results"]
            r, floor, naive = res[row.key], res["1"]["rps"], res["2"]["rps"]
            bad = f" ({r['non2xx']} non-2xx)" if r["non2xx"] else ""
            cells += (
                f" {r['rps']:.0f}{bad} | {r['p50']:.2f} | {r['p99']:.2f} | "
                f"{ratio(r['rps'], floor):.2f} | {ratio(r['rps'], naive):.2f} |"
            )
        lines.append(cells)
    lines += targets(sizes)
    for count, size in sizes.items():
        if size["under"]:
            lines += underwrites.table(rows, size["results"], size["under"], size["writer"], count)
    if first["before"]:
        lines += before_after(first["before"], first["results"], rows, counts[0])
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    notes = (
        (ROOT / "bench" / "NOTES.md").read_text() if (ROOT / "bench" / "NOTES.md").exists() else ""
    )
    (ROOT / "bench" / "results.md").write_text(text + ("\n" + notes if notes else ""))


def targets(sizes: dict[int, dict]) -> list[str]:
    counts = list(sizes)
    small = sizes.get(100_000) or sizes[counts[0]]
    large = sizes.get(1_000_000)
    res = small["results"]
    found: list[tuple[str, str, bool]] = []

    def check(label: str, value: float, ok: bool, unit: str = "x") -> None:
        text = f"{value:.2f}{unit}" if unit == "x" else f"{value:.1f} {unit}"
        found.append((label, text, ok))

    naive = res["2"]["rps"]
    # Throughput against another row: (label, row, the row it is measured against, at least).
    for label, key, reference, factor in (
        ("issue 5: Pro list (3a) >= 1.0x row 2", "3a", "2", 1.0),
        ("issue 5: detail (3f) >= 0.6x row 1", "3f", "1", 0.6),
        ("issue 5: cached discovery (3g) >= 0.8x row 1", "3g", "1", 0.8),
        ("repeated Pro list (3a) >= 0.5x row 1", "3a", "1", 0.5),
        ("repeated Free list (3b) >= 0.8x Pro (3a)", "3b", "3a", 0.8),
    ):
        measured, against = res[key]["rps"], res[reference]["rps"]
        check(label, measured / against, measured >= factor * against)
    rows = [r for r in small["rows"] if r.list_row]
    for row in rows:
        r = res[row.key]
        check(
            f"{row.key} >= 2.5x row 2 at {counts[0]:,}", r["rps"] / naive, r["rps"] >= 2.5 * naive
        )
        check(f"{row.key} p99 <= 50 ms at {counts[0]:,}", r["p99"], r["p99"] <= 50, "ms")
    if large:
        big = large["results"]
        for row in rows:
            check(
                f"{row.key} p99 <= 100 ms at 1,000,000",
                big[row.key]["p99"],
                big[row.key]["p99"] <= 100,
                "ms",
            )
        for row in small["rows"]:
            if row.kind == "varied":
                growth = big[row.key]["rps"] / res[row.key]["rps"]
                check(f"{row.key} at 1,000,000 >= 0.6x its 100,000 req/s", growth, growth >= 0.6)
        if "4j" in big and "4k" in big:
            deep = big["4k"]["rps"] / big["4j"]["rps"]
            check(
                "cursor: deep pages (4k) within 20% of the first ones (4j) at 1,000,000",
                deep,
                deep >= 0.8,
            )
        worst = max(large["rss"]) if large["rss"] else 0
        check("RSS per worker <= 250 MB after the 1,000,000 run", worst, worst <= 250, "MB")
    lines = ["", "## Targets", "", "| Target | Measured | Met |", "|---|---:|---|"]
    lines += [f"| {label} | {value} | {'yes' if ok else '**NO**'} |" for label, value, ok in found]
    return lines


def before_after(baseline: dict, after: dict, rows: list[Row], count: int) -> list[str]:
    lines = [
        "",
        f"## Before and after (repeated rows, {count:,} startups, this sitting)",
        "",
        f"Before: revision `{BASELINE}` (its code, its gunicorn settings, its own database "
        "of the same size loaded by its `seed_demo`), served beside this one; in every round "
        "each row ran on it immediately before running here, so both see the same machine. "
        "Medians over the rounds.",
        "",
        "| Row | before req/s | after req/s | after/before | before p99 ms | after p99 ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        if row.key not in baseline:
            continue
        b, a = baseline[row.key], after[row.key]
        if b["non2xx"]:
            sys.exit(f"the baseline answered row {row.key} with {b['non2xx']} non-2xx")
        lines.append(
            f"| {row.name} | {b['rps']:.0f} | {a['rps']:.0f} | {ratio(a['rps'], b['rps']):.2f} | "
            f"{b['p99']:.2f} | {a['p99']:.2f} |"
        )
    return lines


if __name__ == "__main__":
    main()
