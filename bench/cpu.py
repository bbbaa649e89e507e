"""The CPU each side of a `make bench` row takes: gunicorn (master and workers), PostgreSQL and,
under writes, the writer (bench/writes.py: one process, its threads included) and its
backends, read from /proc just before and just after the recorded wrk run (reading /proc costs
far less than one request; nothing runs during the run itself).

Throughput alone cannot say why a row is slower under writes: the writer may simply take CPU
away from a 2-CPU machine. CPU milliseconds per request say what each request costs the server,
whoever else runs.
"""

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
CPUS = os.cpu_count() or 1
WRITER_APPLICATION = "openstartup-bench-writer"  # the writer's backends, in pg_stat_activity
PROC = Path("/proc")

# The figures a run gains (medians over the rounds, like req/s).
KEYS = (
    "gunicorn_ms",
    "postgres_ms",
    "postgres_all_ms",
    "busy_cpus",
    "writer_cpus",
    "writer_pg_cpus",
)


def parse_stat(text: str) -> tuple[str, int, int, int]:
    """(command, parent pid, own CPU ticks, reaped children's CPU ticks) from the text of
    /proc/<pid>/stat. The command is in parentheses and may itself hold spaces and ")"."""
    command = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return command, int(fields[1]), utime + stime, cutime + cstime


def busy_ticks(proc_stat: str) -> int:
    """Ticks all CPUs spent not idle, from the text of /proc/stat (its first, "cpu" line)."""
    values = [int(v) for v in proc_stat.splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = values[:8]
    return user + nice + system + irq + softirq + steal


def _stat(pid: int | str) -> tuple[str, int, int, int] | None:
    try:
        return parse_stat((PROC / str(pid) / "stat").read_text())
    except (OSError, ValueError, IndexError):  # gone between listing and reading
        return None


def tree_ticks(pid: int) -> int:
    """CPU ticks of a process and its children (gunicorn: the master and its workers)."""
    total = 0
    for one in [pid, *_children(pid)]:
        found = _stat(one)
        if found:
            total += found[2]
    return total


def _children(pid: int) -> list[int]:
    try:
        return [
            int(c) for c in (PROC / str(pid) / "task" / str(pid) / "children").read_text().split()
        ]
    except OSError:
        return []


def postgres_ticks() -> tuple[int, dict[int, int]]:
    """Ticks of every PostgreSQL process: each live one's own, plus what the postmaster reaped
    from the backends that exited (their ticks move there when they exit); and each live one's
    own by pid (so a writer's backend can be taken out)."""
    processes: dict[int, int] = {}
    reaped = 0
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        found = _stat(entry.name)
        if not found or found[0] != "postgres":
            continue
        processes[int(entry.name)] = found[2]
        parent = _stat(found[1])
        if not parent or parent[0] != "postgres":  # the postmaster
            reaped += found[3]
    return sum(processes.values()) + reaped, processes


@dataclass(frozen=True)
class Snapshot:
    at: float
    machine: int
    gunicorn: int
    postgres: int
    processes: dict[int, int]
    writer: int | None  # None: no writer watched
    served: frozenset[int]  # the backends of the bench's database then, less the writer's
    writers: frozenset[int]  # the writer's backends then


class Backends:
    """The backends of the bench's database, the writer's apart (by its application_name),
    asked of pg_stat_activity on a connection of its own (left out)."""

    def __init__(self, url: str):
        self.conn = psycopg.connect(url, autocommit=True)

    def __call__(self) -> tuple[frozenset[int], frozenset[int]]:
        found = self.conn.execute(
            "SELECT pid, application_name FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        writers = frozenset(pid for pid, name in found if name == WRITER_APPLICATION)
        return frozenset(pid for pid, _ in found) - writers, writers

    def close(self) -> None:
        self.conn.close()


@dataclass(frozen=True)
class Watch:
    """What one server's rows read: its gunicorn master's pid, the backends of its database
    and, under writes, the writer's pid."""

    gunicorn: int
    backends: Backends
    writer: int | None = None

    def snapshot(self) -> Snapshot:
        total, processes = postgres_ticks()
        return Snapshot(
            time.monotonic(),
            busy_ticks((PROC / "stat").read_text()),
            tree_ticks(self.gunicorn),
            total,
            processes,
            tree_ticks(self.writer) if self.writer else None,
            *self.backends(),
        )


def figures(start: Snapshot, end: Snapshot, requests: int) -> dict:
    """CPU ms per request of gunicorn and of PostgreSQL: the bench database's backends (less
    the writer's), and every PostgreSQL process of the machine (less the writer's backends:
    background workers, other databases, backends that exited); and the CPUs (of CPUS) the
    machine, the writer and its backends kept busy over the run."""
    seconds = max(end.at - start.at, 1e-9)

    def delta(pids: frozenset[int]) -> int:
        # A backend new since the start counts from 0; one that exited during the run (a
        # writer thread's connection replaced at its CONN_MAX_AGE) is left out: its ticks
        # went to the postmaster's reaped total, and counting it from 0 at the end made the
        # writer's CPUs negative (-1.98 in a sitting of 2026-11-28).
        return sum(
            end.processes[pid] - start.processes.get(pid, 0) for pid in pids if pid in end.processes
        )

    def ms_per_request(ticks: int) -> float:
        return ticks * 1000 / TICKS_PER_SECOND / requests if requests else float("nan")

    def cpus(ticks: int) -> float:
        return ticks / TICKS_PER_SECOND / seconds

    writer_pg = delta(start.writers | end.writers)
    found = {
        "gunicorn_ms": ms_per_request(end.gunicorn - start.gunicorn),
        "postgres_ms": ms_per_request(delta(start.served | end.served)),
        "postgres_all_ms": ms_per_request(end.postgres - start.postgres - writer_pg),
        "busy_cpus": cpus(end.machine - start.machine),
    }
    if start.writer is not None and end.writer is not None:
        found["writer_cpus"] = cpus(end.writer - start.writer)
        found["writer_pg_cpus"] = cpus(writer_pg)
    return found


def medians(results: list[dict]) -> dict:
    """The median of each CPU figure over the rounds that have it."""
    out = {}
    for key in KEYS:
        values = [r[key] for r in results if key in r]
        if values:
            out[key] = statistics.median(values)
    return out


def table(rows: list, sizes: dict[int, dict]) -> list[str]:
    """The section of results.md: the CPU each row's requests cost, per size."""
    counts = list(sizes)
    lines = [
        "",
        "## CPU per request (this sitting)",
        "",
        "Over each recorded wrk run, from /proc: the CPU (user + system) of the gunicorn "
        "master and workers, of the PostgreSQL backends of the size's database, and of every "
        "PostgreSQL process of the machine (background workers, other databases, backends "
        "that exited; the writer's own backend left out), in ms per request wrk counted; and "
        f"the CPUs (of {CPUS}) the whole machine kept busy, wrk included. Medians over the "
        "rounds.",
        "",
        "| Row |"
        + "".join(
            f" {c:,} gunicorn ms/req | PostgreSQL ms/req | all PostgreSQL | busy CPUs |"
            for c in counts
        ),
        "|---|" + "---:|" * (4 * len(counts)),
    ]
    for row in rows:
        cells = f"| {row.name} |"
        for count in counts:
            r = sizes[count]["results"].get(row.key, {})
            cells += (
                f" {_f(r.get('gunicorn_ms'))} | {_f(r.get('postgres_ms'))} | "
                f"{_f(r.get('postgres_all_ms'))} | {_f(r.get('busy_cpus'))} |"
            )
        lines.append(cells)
    return lines


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
