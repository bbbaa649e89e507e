"""The "under writes" rows of `make bench` (issue 32), the harness side: the writer process
(bench/writes.py) started beside gunicorn while every varied row runs again, and the table
that puts each varied row's figure under writes beside its figure without writes.

BENCH_WRITES=0 leaves them out; BENCH_WRITE_RATE overrides the syncs a second (default: the
production rate for the dataset, every verified startup once an hour); BENCH_EDIT_RATE the
founder edits a second (default 1); BENCH_WRITER_CONCURRENCY the writes in flight at once, in
the writer's threads (default the refresh worker's 16, bench/writes.py).

A second set, "under visible writes", runs the varied rows once more with the same syncs and
BENCH_VISIBLE_RATE founder edits a second (default 20; 0 leaves it out): the writer's syncs
change no figure (its fake provider answers the same every hour), so only edits move the
data token, and a real refresh moves figures. Each edit changes what a list shows (a name,
an MRR): 20 a second is a fifth of the 1,000,000 refresh's syncs moving a figure every
hour, more than every sync of the 100,000 one.
"""

import json
import os
import signal
import statistics
import subprocess
from pathlib import Path

import cpu

ENABLED = os.environ.get("BENCH_WRITES", "1") != "0"
RATE = os.environ.get("BENCH_WRITE_RATE")  # None: the production rate for the size
EDITS = float(os.environ.get("BENCH_EDIT_RATE", "1"))
VISIBLE = float(os.environ.get("BENCH_VISIBLE_RATE", "20"))
AT_LEAST = 0.8  # issue 32: each varied row under writes >= 0.8x the same row without


def start(python: str, root: Path, env: dict[str, str], edits: float = EDITS) -> subprocess.Popen:
    """The writer, once it writes: reading its pools takes seconds at 1,000,000 startups, and
    rows measured before that would be measured without writes."""
    code = f"from bench.writes import run; run({RATE or None}, {edits})"
    writer = subprocess.Popen(
        [python, "manage.py", "shell", "-c", code],
        cwd=root,
        # Its backends (one a thread) are named, so bench/cpu.py can tell their CPU from the
        # requests'; its threads are one process, whose /proc ticks count them all.
        env={**env, "PGAPPNAME": cpu.WRITER_APPLICATION},
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


def table(
    rows: list,
    results: dict,
    under: dict,
    writer: dict,
    count: int,
    *,
    title: str = "Under writes",
    edits: float = EDITS,
) -> list[str]:
    """The section of results.md: each varied row without and with writes, side by side, with
    what each request cost gunicorn and PostgreSQL and the CPU the writer took (bench/cpu.py)."""
    lines = [
        "",
        f"## {title} ({count:,} startups, this sitting)",
        "",
        "The varied rows again, each while bench/writes.py syncs at the refresh worker's "
        "production rate for the size (every verified startup once an hour, spread evenly, "
        "through `revenue_sync`) and makes "
        + ("one founder edit a second" if edits == 1 else f"{edits:g} founder edits a second")
        + f" (`startup_update`). The writer: {json.dumps(writer)}.",
        "",
        "CPU ms/req: gunicorn's (master and workers) and PostgreSQL's (the backends of the "
        "size's database, less the writer's own) per request, without and with writes; their "
        "ratio is what the writes add to each request (invalidation, refills), whatever CPU "
        "the writer takes. Writer CPUs: the writer process (all its threads) and its "
        f"backends, of the machine's {cpu.CPUS}. If only: the no-writes "
        f"req/s x ({cpu.CPUS} - writer CPUs) / {cpu.CPUS}, the figure if the writer only took "
        "its CPU away.",
        "",
        "| Row | no writes req/s | p99 ms | under writes req/s | p99 ms | ratio | >= 0.8x "
        "| gunicorn CPU ms/req | under writes | ratio | PostgreSQL CPU ms/req | under writes "
        "| writer CPUs | if only req/s | measured / if only |",
        "|---|" + "---:|" * 5 + "---|" + "---:|" * 8,
    ]
    found = []
    for row in rows:
        if row.key not in under:
            continue
        a, w = results[row.key], under[row.key]
        ratio = w["rps"] / a["rps"] if a["rps"] else float("nan")
        bad = f" ({w['non2xx']} non-2xx)" if w["non2xx"] else ""
        cells = (
            f"| {row.name} | {a['rps']:.0f} | {a['p99']:.2f} | {w['rps']:.0f}{bad} | "
            f"{w['p99']:.2f} | {ratio:.2f} | {'yes' if ratio >= AT_LEAST else '**NO**'} |"
        )
        costs = cpu_costs(a, w)
        if costs:
            found.append((ratio, costs))
            cells += (
                " {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.0f} | {:.2f} |".format(
                    *costs.values()
                )
            )
        else:
            cells += " - |" * 8
        lines.append(cells)
    return lines + reading(found)


def cpu_costs(a: dict, w: dict) -> dict:
    """One row's CPU figures without (`a`) and with (`w`) writes; {} when not measured."""
    if "gunicorn_ms" not in a or "writer_cpus" not in w:
        return {}
    writer = w["writer_cpus"] + w["writer_pg_cpus"]
    if_only = a["rps"] * max(cpu.CPUS - writer, 0) / cpu.CPUS
    return {
        "gunicorn": a["gunicorn_ms"],
        "gunicorn_writes": w["gunicorn_ms"],
        "gunicorn_ratio": _ratio(w["gunicorn_ms"], a["gunicorn_ms"]),
        "postgres": a["postgres_ms"],
        "postgres_writes": w["postgres_ms"],
        "writer": writer,
        "if_only": if_only,
        "measured_vs_if_only": _ratio(w["rps"], if_only),
    }


def reading(found: list[tuple[float, dict]]) -> list[str]:
    """A paragraph from the figures: how much of the drop the writer's CPU explains."""
    if not found:
        return []

    def spread(values: list[float], unit: str = "x") -> str:
        return f"median {statistics.median(values):.2f}{unit} ({min(values):.2f}-{max(values):.2f})"

    ratios = [r for r, _ in found]
    writer = [c["writer"] for _, c in found]
    expected = [max(cpu.CPUS - w, 0) / cpu.CPUS for w in writer]
    return [
        "",
        f"Reading these rows: the writer and its backend kept {spread(writer, ' CPUs')} "
        f"of the {cpu.CPUS} busy. Had they only taken that CPU away, each row would keep "
        f"{spread(expected)} of its no-writes req/s; it kept {spread(ratios)}, "
        f"{spread([c['measured_vs_if_only'] for _, c in found])} of that. Each request cost "
        f"gunicorn {spread([c['gunicorn_ratio'] for _, c in found])} the CPU it cost without "
        f"writes and PostgreSQL "
        f"{spread([_ratio(c['postgres_writes'], c['postgres']) for _, c in found])}: above 1, "
        "the writes make each request dearer (invalidation, refills of what they evicted), "
        "beyond the CPU the writer takes.",
    ]


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")
