"""`make bench`: the service against a framework floor and a naive implementation, in one run.

PostgreSQL with BENCH_COUNTS startups (each size in its own database), gunicorn with 2 workers (its
gunicorn.conf.py otherwise: worker class, threads) on
127.0.0.1:8480, wrk (8 connections, BENCH_SECONDS per row, BENCH_ROUNDS rounds). Two kinds of
rows: "repeated" rows send one URL again and again (what caches help), "varied" rows give every
request its own values (bench/varied.lua: minMrr, page, q, category, slug, cursor), which no
cache helps; every round of the repeated rows runs before the first varied row. Prints
requests/s, p50 and p99 per row, checks the targets of issues 5 and 32, and writes
bench/results.md (one column group per dataset size, side by side).

Environment: bench/sitting.py (BENCH_COUNTS, BENCH_SECONDS, BENCH_ROUNDS, BENCH_ROWS,
BENCH_BASELINE, ...). Rows: bench/rows.py; the report and its targets: bench/report.py.
"""

import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import cpu  # bench/*.py beside this script (its folder is on sys.path)
import gcstats
import profiles
import psycopg
import redis
import underwrites
from report import report
from rows import POOLS, Row, rows_for
from sitting import (
    BASELINE,
    CONNECTIONS,
    COUNTS,
    DATABASE_URL,
    ONLY,
    POOL_SIZE,
    PORT,
    PROFILE,
    PY,
    REDIS_URL,
    RESEED,
    ROOT,
    ROUNDS,
    SECONDS,
    WARMUP_SECONDS,
)


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


def start_server(count: int, target: Target = CURRENT, gc_stats: str = "") -> subprocess.Popen:
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
        # bench/gcstats.py: each worker's garbage collections, timed (this server only).
        "BENCH_GC_STATS": gc_stats,
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
        **cpu.medians(results),
    }


UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip()).groups()
    return float(value) * UNITS[unit]


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
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": rps,
        "requests": requests,
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


def make_pools(count: int, folder: str) -> None:
    shell(count, f"size, folder = {POOL_SIZE}, {folder!r}\n" + POOLS)


def measure(
    wrk_bin: str, row: Row, target: Target = CURRENT, watch: cpu.Watch | None = None
) -> dict:
    """One recorded run of `row` on `target`: a few requests first (connections, caches),
    then an unrecorded warm-up at the same load (workers, PostgreSQL's buffers). With a
    `watch`, the CPU each side took over the recorded run (bench/cpu.py)."""
    if row.script is None:
        for _ in range(3):
            get(row.path, row.headers, target=target)
    wrk(wrk_bin, row, WARMUP_SECONDS, target)
    if watch is None:
        return wrk(wrk_bin, row, SECONDS, target)
    start = watch.snapshot()
    result = wrk(wrk_bin, row, SECONDS, target)
    return {**result, **cpu.figures(start, watch.snapshot(), result["requests"])}


def profile_rows(wrk_bin: str, count: int, rows: list[Row], server: int, suffix: str = "") -> None:
    """BENCH_PROFILE=1: each varied row once more, unrecorded, under py-spy (bench/profiles.py);
    after the recorded runs, so sampling never touches a figure."""
    if not PROFILE:
        return
    for row in rows:
        if row.kind == "varied":
            step(f"{count:,}: profiling {row.name}{' under writes' if suffix else ''}")
            profiles.record(server, lambda row=row: wrk(wrk_bin, row, SECONDS), count, row, suffix)


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
    server = start_server(count, gc_stats=pools)
    watch = cpu.Watch(server.pid, cpu.Backends(database_url(count)))
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
            result = measure(wrk_bin, row, watch=watch)
            print(
                f"   {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, "
                f"p99 {result['p99']:.2f} ms, non-2xx {result['non2xx']}, "
                f"gunicorn {result['gunicorn_ms']:.2f} CPU ms/req"
            )
            runs[row.key].append(result)
        profile_rows(wrk_bin, count, rows, server.pid)
        under, writer = measure_under_writes(wrk_bin, count, rows, watch)
        visible, visible_writer = measure_under_writes(
            wrk_bin, count, rows, watch, edits=underwrites.VISIBLE
        )
        rss = worker_rss_mb(server)
        collections = gcstats.totals(pools)
    finally:
        watch.backends.close()
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
        "gc": collections,
        "under": {key: median_run(found) for key, found in under.items() if found},
        "writer": writer,
        "visible": {key: median_run(found) for key, found in visible.items() if found},
        "visible_writer": visible_writer,
    }


def measure_under_writes(
    wrk_bin: str, count: int, rows: list[Row], watch: cpu.Watch, edits: float = underwrites.EDITS
) -> tuple[dict, dict]:
    """Every varied row again, ROUNDS rounds, while bench/writes.py writes (issue 32): syncs
    at the production rate and `edits` founder edits a second (profiled with the default
    edits only)."""
    varied = [row for row in rows if row.kind == "varied"]
    if not underwrites.ENABLED or not varied or edits <= 0:
        return {}, {}
    step(f"{count:,}: the writer (syncs at the production rate, {edits:g} founder edits a second)")
    writer = underwrites.start(PY, ROOT, environment(count), edits)
    watch = dataclasses.replace(watch, writer=writer.pid)
    found: dict[str, list[dict]] = {row.key: [] for row in varied}
    try:
        for round_number in range(1, ROUNDS + 1):
            for row in varied:
                step(
                    f"{count:,}: under writes ({edits:g} edits/s), round "
                    f"{round_number}/{ROUNDS}, {row.name}"
                )
                result = measure(wrk_bin, row, watch=watch)
                print(
                    f"   {result['rps']:.0f} req/s, p99 {result['p99']:.2f} ms, gunicorn "
                    f"{result['gunicorn_ms']:.2f} CPU ms/req, the writer "
                    f"{result['writer_cpus'] + result['writer_pg_cpus']:.2f} CPUs"
                )
                found[row.key].append(result)
        if edits == underwrites.EDITS:
            profile_rows(wrk_bin, count, varied, watch.gunicorn, "-writes")
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


if __name__ == "__main__":
    main()
