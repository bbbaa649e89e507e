"""`make bench`: the service against a framework floor and a naive implementation, in one run.

PostgreSQL with 100,000 startups, gunicorn with 2 workers on 127.0.0.1:8480, wrk (8 connections,
BENCH_SECONDS per row, BENCH_ROUNDS rounds). Prints requests/s, p50 and p99 per row with ratios
to rows 1 and 2, checks the targets of issue 5, and writes bench/results.md.
Environment (all optional):

    BENCH_DATABASE_URL  postgres://postgres@127.0.0.1:5432/openstartup_bench
    BENCH_REDIS_URL     redis://127.0.0.1:6379/9
    BENCH_PORT          8480
    BENCH_SECONDS       5 (per row and round)
    BENCH_ROUNDS        3 (each figure is the median over the rounds)
    BENCH_COUNT         100000
    BENCH_ROWS          only these rows, e.g. `1,3f,3g` (for iterating; targets need 1 and 2)
    BENCH_SKIP_SEED     1: keep the startups already in BENCH_DATABASE_URL (for iterating)
"""

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/openstartup_bench"
)
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
PORT = int(os.environ.get("BENCH_PORT", "8480"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
COUNT = int(os.environ.get("BENCH_COUNT", "100000"))
ONLY = {row for row in os.environ.get("BENCH_ROWS", "").split(",") if row}
SKIP_SEED = os.environ.get("BENCH_SKIP_SEED") == "1"
CONNECTIONS = 8
WARMUP_SECONDS = 1
BASE = f"http://127.0.0.1:{PORT}"
ENV = {
    **os.environ,
    "DJANGO_SETTINGS_MODULE": "openstartup.settings",
    "DATABASE_URL": DATABASE_URL,
    "REDIS_URL": REDIS_URL,
    "CACHE_KEY_PREFIX": "openstartup-bench",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    "LOG_LEVEL": "WARNING",
}


def step(message: str) -> None:
    print(f"== {message}", flush=True)


def manage(*args: str) -> str:
    run = subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{run.stderr}")
    return run.stdout


def ensure_wrk() -> str:
    if not shutil.which("wrk"):
        step("installing wrk (Debian package)")
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=True, capture_output=True)
    return shutil.which("wrk") or sys.exit("wrk is not available")


def ensure_database() -> None:
    name = DATABASE_URL.rsplit("/", 1)[1]
    server = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(server, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def create_key(email: str, *extra: str) -> str:
    return manage("create_api_key", email, *extra).strip().splitlines()[-1]


def get(path: str, headers: dict[str, str] | None = None) -> dict:
    request = urllib.request.Request(BASE + path, headers=headers or {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def start_server() -> subprocess.Popen:
    env = {
        **ENV,
        "BENCH_VIEWS": "1",
        "WEB_CONCURRENCY": "2",
        "GUNICORN_THREADS": "1",
        "GUNICORN_BIND": f"127.0.0.1:{PORT}",
        "GUNICORN_ACCESS_LOG": "",
        "GUNICORN_MAX_REQUESTS": "0",
    }
    server = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "openstartup.wsgi"], cwd=ROOT, env=env
    )
    for _ in range(200):
        try:
            get("/healthz")
            return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    sys.exit("gunicorn did not come up")


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


def wrk(
    wrk_bin: str, path: str, headers: dict[str, str], script: str | None = None, seconds: int = 0
) -> dict:
    args = [wrk_bin, "-t2", f"-c{CONNECTIONS}", f"-d{seconds or SECONDS}s", "--latency"]
    for name, value in headers.items():
        args += ["-H", f"{name}: {value}"]
    if script:
        args += ["-s", str(ROOT / "bench" / script)]
    out = subprocess.run([*args, BASE + path], capture_output=True, text=True, check=True).stdout
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


def main() -> None:
    os.chdir(ROOT)
    wrk_bin = ensure_wrk()
    step(f"database {DATABASE_URL}")
    ensure_database()
    manage("migrate", "--noinput")
    started = time.monotonic()
    if SKIP_SEED:
        seed_output = "skipped (BENCH_SKIP_SEED=1)"
    else:
        step(f"seeding {COUNT:,} startups")
        seed_output = manage("seed_demo", "--count", str(COUNT)).strip()
    seed_seconds = time.monotonic() - started
    print(f"   {seed_output} (command wall time {seed_seconds:.1f} s)")
    pro = create_key("bench-pro@example.com", "--plan", "pro", "--name", "bench")
    # Free plan with an operator allowance override big enough for every request of the run,
    # so quota accounting stays on the path without running out.
    free = create_key(
        "bench-free@example.com", "--plan", "free", "--allowance", "2000000000", "--name", "bench"
    )
    manage(
        "shell", "-c", "from quota.models import MonthlyUsage; MonthlyUsage.objects.all().delete()"
    )

    step(f"gunicorn, 2 workers, {BASE}")
    server = start_server()
    try:
        pro_h, free_h = {"X-API-Key": pro}, {"X-API-Key": free}
        top = get("/api/v1/startups?limit=1", pro_h)["data"][0]["slug"]
        rows = [
            ("1 bare Django view (4 KB JSON)", "/bench/bare", {}, None),
            ("2 minimal ORM list (no auth/quota/rank)", "/bench/minimal", {}, None),
            ("3a list, default sort, Pro key", "/api/v1/startups", pro_h, None),
            ("3b list, default sort, Free key", "/api/v1/startups", free_h, None),
            ("3c list, q=forge", "/api/v1/startups?q=forge", pro_h, None),
            (
                "3d list, category=developer&minMrr=1000",
                "/api/v1/startups?category=developer&minMrr=1000",
                pro_h,
                None,
            ),
            (
                "3e list, sort=name-asc&page=500",
                "/api/v1/startups?sort=name-asc&page=500",
                pro_h,
                None,
            ),
            ("3f detail", f"/api/v1/startups/{top}", pro_h, None),
            ("3g /api/ai/discovery (cached)", "/api/ai/discovery", {}, None),
            ("3h MCP tools/call search_startups", "/api/mcp", {}, "mcp.lua"),
        ]
        rows = [row for row in rows if not ONLY or row[0].split()[0] in ONLY]
        runs: dict[str, list[dict]] = {name: [] for name, *_ in rows}
        # Every row once per round, rounds one after the other: a slow spell of this shared
        # machine then lands on all rows alike instead of on whichever row ran during it.
        for round_number in range(1, ROUNDS + 1):
            for name, path, headers, script in rows:
                if script is None:
                    for _ in range(3):  # warm: connections, caches
                        get(path, headers)
                step(f"round {round_number}/{ROUNDS}, {name}: {path}")
                # An unrecorded warm-up at the same load first (worker and connection warm-up,
                # caches, PostgreSQL's buffers), then the measured run.
                wrk(wrk_bin, path, headers, script, seconds=WARMUP_SECONDS)
                result = wrk(wrk_bin, path, headers, script)
                print(
                    f"   {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, "
                    f"p99 {result['p99']:.2f} ms"
                )
                runs[name].append(result)
        results = [(name, path, median_run(runs[name])) for name, path, *_ in rows]
    finally:
        server.terminate()
        server.wait(timeout=30)
    report(results, seed_seconds, seed_output)


def report(results: list, seed_seconds: float, seed_output: str) -> None:
    by = {name.split()[0]: r for name, _, r in results}
    if ONLY:  # an iteration run: print, keep bench/results.md as the last full run left it
        for name, _, r in results:
            print(f"{name}: {r['rps']:.0f} req/s, p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms")
        if "1" in by:
            for key, r in by.items():
                print(f"   {key} vs row 1: {r['rps'] / by['1']['rps']:.2f}")
        return
    floor, naive = by["1"]["rps"], by["2"]["rps"]
    list_rows = [k for k in by if k.startswith("3") and k[1] in "abcde"]
    targets = [
        ("Pro list >= 1.0x row 2", by["3a"]["rps"] / naive, 1.0),
        ("Free list >= 0.8x row 2", by["3b"]["rps"] / naive, 0.8),
        ("detail >= 0.6x row 1", by["3f"]["rps"] / floor, 0.6),
        ("cached discovery >= 0.8x row 1", by["3g"]["rps"] / floor, 0.8),
    ]
    lines = [
        "# Benchmark results",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench` on {platform.node()}: "
        f"{os.cpu_count()} CPUs (wrk, gunicorn and PostgreSQL share them), Python "
        f"{platform.python_version()}, PostgreSQL and Redis on loopback, {COUNT:,} startups, "
        f"gunicorn 2 sync workers, wrk 2 threads x {CONNECTIONS} connections x {SECONDS} s "
        f"per row after a {WARMUP_SECONDS} s unrecorded warm-up, {ROUNDS} rounds over all rows; "
        "each figure is the median over the rounds.",
        f"Seed: `{seed_output}` (command wall time {seed_seconds:.1f} s).",
        "",
        "| Row | Path | req/s | p50 ms | p99 ms | vs row 1 | vs row 2 | non-2xx |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, path, r in results:
        lines.append(
            f"| {name} | `{path}` | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} | "
            f"{r['rps'] / floor:.2f} | {r['rps'] / naive:.2f} | {r['non2xx']} |"
        )
    lines += ["", "## Targets", "", "| Target | Measured | Met |", "|---|---:|---|"]
    for label, ratio, goal in targets:
        lines.append(f"| {label} | {ratio:.2f}x | {'yes' if ratio >= goal else 'NO'} |")
    for key in list_rows:
        p99 = by[key]["p99"]
        lines.append(f"| row {key} p99 <= 50 ms | {p99:.1f} ms | {'yes' if p99 <= 50 else 'NO'} |")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    (ROOT / "bench" / "results.md").write_text(text + NOTES)


NOTES = """
## What the rows are

1. `bench/views.py: bare`: a plain Django view, `JsonResponse` of a fixed ~4 KB document, through
   the same middleware stack as everything else: the framework floor on this machine.
2. `bench/views.py: minimal_list`: the naive list: the same selector query through the ORM (exact
   `COUNT(*)`, then the page of model instances), plain dicts, `JsonResponse`. No key, no quota,
   no rank, no camelCase renderer, no caches.
3. The service as deployed: DRF, API-key authentication, plan lookup, the monthly allowance (one
   conditional `UPDATE` per request on Free; the Free key has an operator allowance override
   large enough for the run), `X-Service-*` headers, camelCase orjson rendering, the rank. `q`,
   `category`, sort and detail rows use the Pro key; `/api/ai/discovery` and MCP are called
   without a key (they never meter).

## What makes the service rows fast

- **Per-process copies kept exact by generation tokens** (`openstartup/readcache.py`): key
  lookups with their plan inputs, rendered startup profiles, list rows and AI answers are kept in
  each worker and used only while the "auth"/"data" token in PostgreSQL is unchanged. Every
  write replaces the token in its own transaction, so a revocation, a plan change or an edit
  shows on the next request on every server, whatever Redis does. A request reads both tokens in
  one primary-key query; a Pro detail is then that one query.
- **Pro requests do not touch the counter** (records served on Pro do not count); a Free request
  is one conditional `UPDATE` (with its delivery hold, one statement) and, after the answer is
  written, the hold's removal.
- **List skeleton** (exact total, page ids, ranks) in Redis per filter set and page, keyed by
  the data token; rows from the copies.
- **/api/ai**: answers (rendered bytes, ETag) kept per worker and in Redis under the data
  token; the first server to build an entry stores it with `add()` and every server serves that
  one.
- Key and `If-None-Match` headers read from `request.META`, orjson rendering, a profile embedded
  in the envelope as an `orjson.Fragment`.
"""


if __name__ == "__main__":
    main()
