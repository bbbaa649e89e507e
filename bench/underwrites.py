"""The "under writes" rows of `make bench` (issue 32), the harness side: the writer process
(bench/writes.py) started beside gunicorn while every varied row runs again, and the table
that puts each varied row's figure under writes beside its figure without writes.

BENCH_WRITES=0 leaves them out; BENCH_WRITE_RATE overrides the syncs a second (default: the
production rate for the dataset, every verified startup once an hour); BENCH_EDIT_RATE the
founder edits a second (default 1).
"""

import json
import os
import signal
import subprocess
from pathlib import Path

ENABLED = os.environ.get("BENCH_WRITES", "1") != "0"
RATE = os.environ.get("BENCH_WRITE_RATE")  # None: the production rate for the size
EDITS = float(os.environ.get("BENCH_EDIT_RATE", "1"))
AT_LEAST = 0.8  # issue 32: each varied row under writes >= 0.8x the same row without


def start(python: str, root: Path, env: dict[str, str]) -> subprocess.Popen:
    """The writer, once it writes: reading its pools takes seconds at 1,000,000 startups, and
    rows measured before that would be measured without writes."""
    code = f"from bench.writes import run; run({RATE or None}, {EDITS})"
    writer = subprocess.Popen(
        [python, "manage.py", "shell", "-c", code],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in writer.stdout:  # bench/writes.py's READY line ("writing")
        if line.strip() == "writing":
            return writer
    raise SystemExit(f"the writer stopped before writing (exit {writer.wait()})")


def stop(writer: subprocess.Popen) -> dict:
    """Stop the writer; what it did (syncs, edits, rates, errors, worst lag)."""
    writer.send_signal(signal.SIGTERM)
    out, _ = writer.communicate(timeout=60)
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": f"the writer printed no summary (exit {writer.returncode})"}


def table(rows: list, results: dict, under: dict, writer: dict, count: int) -> list[str]:
    """The section of results.md: each varied row without and with writes, side by side."""
    lines = [
        "",
        f"## Under writes ({count:,} startups, this sitting)",
        "",
        "The varied rows again, each while bench/writes.py syncs at the refresh worker's "
        "production rate for the size (every verified startup once an hour, spread evenly, "
        "through `revenue_sync`) and makes one founder edit a second (`startup_update`). "
        f"The writer: {json.dumps(writer)}.",
        "",
        "| Row | no writes req/s | p99 ms | under writes req/s | p99 ms | ratio | >= 0.8x |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        if row.key not in under:
            continue
        a, w = results[row.key], under[row.key]
        ratio = w["rps"] / a["rps"] if a["rps"] else float("nan")
        bad = f" ({w['non2xx']} non-2xx)" if w["non2xx"] else ""
        lines.append(
            f"| {row.name} | {a['rps']:.0f} | {a['p99']:.2f} | {w['rps']:.0f}{bad} | "
            f"{w['p99']:.2f} | {ratio:.2f} | {'yes' if ratio >= AT_LEAST else '**NO**'} |"
        )
    return lines
