"""The settings of one `make bench` sitting, from the environment (all optional):

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
BENCH_PROFILE       1: after the recorded runs, each varied row (and each under writes) once
                    more under py-spy, summarised into bench/profiles/ (bench/profiles.py)
BENCH_WRITES        0: leave out the "under writes" rows (bench/underwrites.py:
                    BENCH_WRITE_RATE, BENCH_EDIT_RATE)
BENCH_VISIBLE_RATE  founder edits a second of the "under visible writes" rows (default 20;
                    0 leaves them out)
"""

import os
import sys
from pathlib import Path

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
PROFILE = os.environ.get("BENCH_PROFILE") == "1"
CONNECTIONS = 8
WARMUP_SECONDS = 1
POOL_SIZE = 20_000  # slugs and cursors per pool: far more than a per-process copy keeps warm
