"""The report of a `make bench` sitting: bench/results.md, the targets table and the
before/after table."""

import os
import platform
import sys
from datetime import UTC, datetime

import cpu
import gcstats
import profiles
import underwrites
from rows import Row
from sitting import BASELINE, CONNECTIONS, ONLY, ROOT, ROUNDS, SECONDS, WARMUP_SECONDS


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
            print(f"   {gcstats.describe(size['gc'])}")
            print("\n".join(cpu.table(rows, {count: size})))
            print("\n".join(under_writes_tables(rows, size, count)))
        print("\n".join(profiles.references()))
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
        lines.append(
            f"- {count:,} startups: {size['seed']}; worker RSS after the run: {rss} MB; "
            f"{gcstats.describe(size['gc'])} (bench/gcstats.py)."
        )
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
    lines += cpu.table(rows, sizes)
    for count, size in sizes.items():
        lines += under_writes_tables(rows, size, count)
    if first["before"]:
        lines += before_after(first["before"], first["results"], rows, counts[0])
    lines += profiles.references()
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    notes = (
        (ROOT / "bench" / "NOTES.md").read_text() if (ROOT / "bench" / "NOTES.md").exists() else ""
    )
    (ROOT / "bench" / "results.md").write_text(text + ("\n" + notes if notes else ""))


def under_writes_tables(rows: list, size: dict, count: int) -> list[str]:
    """The size's varied rows under writes: with the default edits, then the visible ones."""
    lines = []
    if size["under"]:
        lines += underwrites.table(rows, size["results"], size["under"], size["writer"], count)
    if size.get("visible"):
        lines += underwrites.table(
            rows,
            size["results"],
            size["visible"],
            size["visible_writer"],
            count,
            title="Under visible writes",
            edits=underwrites.VISIBLE,
        )
    return lines


# Rows measured against others (issue 32): the sorts against the default sort, Free against Pro,
# detail and history against the minimal ORM detail.
DEFAULT_SORT_ROW, SORT_ROWS = "4a", ("4c", "4d", "4e", "4f", "4g")
FREE_PRO = (("3b", "3a"), ("4b", "4a"))
DETAIL_ROWS, MINIMAL_DETAIL, MINIMAL_LIST = ("4l", "4m"), "2d", "2"


Where = tuple[int, str] | None  # the size and suffix (-writes) of a measured row's profile


def targets(sizes: dict[int, dict]) -> list[str]:
    """The targets table: (label, measured, met) per target of issues 5 and 32; a target
    missed on a profiled row (BENCH_PROFILE=1) links that row's profile."""
    counts = list(sizes)
    small_count = 100_000 if 100_000 in sizes else counts[0]
    small = sizes[small_count]
    large = sizes.get(1_000_000)
    res = small["results"]
    found: list[tuple[str, str, bool, str]] = []

    def check(label: str, value: float, ok: bool, unit: str = "x", profile: str = "") -> None:
        text = f"{value:.2f}{unit}" if unit == "x" else f"{value:.1f} {unit}"
        found.append((label, text, ok, profile))

    def at_least(
        label: str, measured: dict, key: str, against: dict, ref: str, factor: float, at: Where
    ):
        if key in measured and ref in against:
            value = ratio(measured[key]["rps"], against[ref]["rps"])
            check(
                f"{label}: {key} >= {factor}x {ref}",
                value,
                value >= factor,
                profile=profiles.link(*at, key) if at else "",
            )

    def p99_at_most(label: str, measured: dict, key: str, ms: float, at: Where) -> None:
        if key in measured:
            check(
                f"{label}: {key} p99 <= {ms:.0f} ms",
                measured[key]["p99"],
                measured[key]["p99"] <= ms,
                "ms",
                profiles.link(*at, key),
            )

    # Issue 5 (repeated rows).
    for key, reference, factor in (("3a", "2", 1.0), ("3f", "1", 0.6), ("3g", "1", 0.8)):
        at_least("issue 5", res, key, res, reference, factor, None)
    varied = [r.key for r in small["rows"] if r.kind == "varied" and r.key != MINIMAL_DETAIL]
    lists = [r.key for r in small["rows"] if r.list_row]
    for count, size in sizes.items():
        where = f"{count:,}"
        results, under = size["results"], size["under"]
        for key in varied:  # under writes, against the same row without
            at_least(f"under writes at {where}", under, key, results, key, 0.8, (count, "-writes"))
        for key in SORT_ROWS:  # no second-class sort
            at_least(f"sort at {where}", results, key, results, DEFAULT_SORT_ROW, 0.8, (count, ""))
        for key, reference in FREE_PRO:
            at_least(f"Free vs Pro at {where}", results, key, results, reference, 0.8, (count, ""))
    for key in lists:
        at_least("list at 100,000", res, key, res, MINIMAL_LIST, 3.0, (small_count, ""))
    for key in DETAIL_ROWS:
        at_least("detail at 100,000", res, key, res, MINIMAL_DETAIL, 5.0, (small_count, ""))
        p99_at_most("detail at 100,000", res, key, 30, (small_count, ""))
    if large:
        big = large["results"]
        for key in varied:
            at_least("1,000,000 vs 100,000", big, key, res, key, 0.8, (1_000_000, ""))
            at_least(
                "1,000,000 vs 100,000 under writes",
                large["under"],
                key,
                small["under"],
                key,
                0.8,
                (1_000_000, "-writes"),
            )
            p99_at_most("at 1,000,000", big, key, 60, (1_000_000, ""))
            p99_at_most(
                "at 1,000,000 under writes", large["under"], key, 60, (1_000_000, "-writes")
            )
        if "4j" in big and "4k" in big:
            deep = ratio(big["4k"]["rps"], big["4j"]["rps"])
            check(
                "cursor: deep pages (4k) >= 0.8x the first ones (4j) at 1,000,000",
                deep,
                deep >= 0.8,
                profiles.link(1_000_000, "", "4k"),
            )
        worst = max(large["rss"]) if large["rss"] else 0
        check("RSS per worker <= 250 MB after the 1,000,000 run", worst, worst <= 250, "MB")
    for count, size in sizes.items():
        writer = size["writer"]
        if writer.get("target_syncs_per_s"):
            kept = ratio(writer["syncs_per_s"], writer["target_syncs_per_s"])
            check(
                f"the writer's syncs at {count:,}: {writer['syncs_per_s']}/s of the production "
                f"rate {writer['target_syncs_per_s']}/s",
                kept,
                kept >= 0.95,
            )
    lines = ["", "## Targets", "", "| Target | Measured | Met |", "|---|---:|---|"]
    for label, value, ok, profile in found:
        met = "yes" if ok else "**NO**" + (f" ({profile})" if profile else "")
        lines.append(f"| {label} | {value} | {met} |")
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
