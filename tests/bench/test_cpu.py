"""The arithmetic of `make bench`'s CPU figures (bench/cpu.py) and of its py-spy summaries
(bench/profiles.py), on fixed inputs: no server, no timing."""

import importlib
import os
from pathlib import Path

import pytest

from bench import cpu

ROOT = Path(__file__).resolve().parent.parent.parent

# /proc/<pid>/stat of a process whose command holds a space and a ")": fields 14-17 (utime,
# stime, cutime, cstime) are 120, 30, 7, 3.
STAT = (
    "4242 (gunicorn: w) x) S 4200 4242 4242 0 -1 4194560 1 0 0 0 120 30 7 3 20 0 5 0 99 "
    "1000 50 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
)


def test_parse_stat_reads_the_fields_after_the_command():
    assert cpu.parse_stat(STAT) == ("gunicorn: w) x", 4200, 150, 10)


def test_busy_ticks_leaves_out_idle_and_iowait():
    proc_stat = "cpu  100 5 50 9000 40 3 2 1 0 0\ncpu0 50 2 25 4500 20 1 1 0 0 0\n"
    assert cpu.busy_ticks(proc_stat) == 100 + 5 + 50 + 3 + 2 + 1


def test_live_processes_parse():
    command, parent, ticks, _ = cpu.parse_stat(Path(f"/proc/{os.getpid()}/stat").read_text())
    assert command and parent == os.getppid() and ticks >= 0


def snapshot(at, gunicorn, postgres, processes, writer=None, served=(), writers=()):
    return cpu.Snapshot(
        at, 0, gunicorn, postgres, processes, writer, frozenset(served), frozenset(writers)
    )


def test_figures_per_request_and_the_writer_apart():
    t = cpu.TICKS_PER_SECOND
    start = snapshot(
        10.0, 1 * t, 5 * t, {1: 0, 2: 2 * t, 3: t}, writer=0, served={1, 2}, writers={3}
    )
    # Over 2 s and 400 requests: gunicorn 2 s of CPU; backends 1 and 2 (the bench database)
    # 0.5 s each; backend 5 new since the start (counts from 0) 0.2 s; the writer's backend 3
    # 0.4 s; every PostgreSQL process 2.5 s in all; the writer process 0.6 s.
    end = snapshot(
        12.0,
        3 * t,
        int(7.5 * t),
        {1: t // 2, 2: int(2.5 * t), 3: int(1.4 * t), 5: int(0.2 * t)},
        writer=int(0.6 * t),
        served={1, 2, 5},
        writers={3},
    )
    found = cpu.figures(start, end, 400)
    assert found["gunicorn_ms"] == pytest.approx(5.0)  # 2,000 ms / 400
    assert found["postgres_ms"] == pytest.approx(3.0)  # 1,200 ms / 400
    assert found["postgres_all_ms"] == pytest.approx(5.25)  # (2,500 - 400) ms / 400
    assert found["writer_cpus"] == pytest.approx(0.3)  # 0.6 s over 2 s
    assert found["writer_pg_cpus"] == pytest.approx(0.2)


def test_a_writer_backend_that_exits_during_the_run_never_makes_its_cpu_negative():
    """A writer thread's connection replaced during the run: the old backend is gone at the
    end (its ticks went to the postmaster), the new one counts from 0."""
    t = cpu.TICKS_PER_SECOND
    start = snapshot(0.0, 0, 0, {3: 5 * t}, writer=0, served=set(), writers={3})
    end = snapshot(1.0, 0, 0, {4: t // 2}, writer=t // 2, served=set(), writers={4})
    found = cpu.figures(start, end, 100)
    assert found["writer_pg_cpus"] == pytest.approx(0.5)


def test_no_writer_no_writer_figures():
    start = snapshot(0.0, 0, 0, {})
    found = cpu.figures(start, snapshot(1.0, 10, 0, {}), 0)
    assert "writer_cpus" not in found
    assert found["gunicorn_ms"] != found["gunicorn_ms"]  # no request counted: NaN


def test_medians_over_rounds_keep_only_measured_figures():
    rounds = [{"gunicorn_ms": 1.0}, {"gunicorn_ms": 3.0}, {"gunicorn_ms": 2.0, "writer_cpus": 0.5}]
    assert cpu.medians(rounds) == {"gunicorn_ms": 2.0, "writer_cpus": 0.5}


def test_profile_summary_counts_own_and_cumulative_samples(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    profiles = importlib.import_module("profiles")
    site = "/venv/lib/python3.11/site-packages"
    worker = f"run (/py/lib/python3.11/threading.py);handle ({site}/gunicorn/workers/gthread.py)"
    middleware = (
        f"__call__ ({ROOT}/core/requestid.py);inner ({site}/django/core/handlers/exception.py)"
    )
    view = f"get ({ROOT}/restapi/views.py)"
    query = f"execute ({site}/psycopg/cursor.py)"
    raw = "\n".join(
        [
            f'process 1:"gunicorn";{worker};{middleware};{view};{query} 6',
            f'process 1:"gunicorn";{worker};{middleware};{view} 3',
            f'process 1:"gunicorn";{worker} 1',
        ]
    )
    text = profiles.summarise(profiles.parse_raw(raw), "title")
    assert "10 samples" in text
    own = text.split("by own samples:")[1].split("\n\n")[0]
    assert "6  60.0%  execute (psycopg/cursor.py)" in own
    assert "3  30.0%  get (restapi/views.py)" in own
    cumulative = text.split("by cumulative samples")[1]
    assert "9  90.0%  get (restapi/views.py)" in cumulative
    # The worker and a middleware that only hands on are plumbing: left out.
    assert "gthread" not in cumulative and "requestid" not in cumulative
    assert "6  60.0%  psycopg" in text and "3  30.0%  project: restapi" in text


def test_a_profile_with_bytes_that_are_not_utf8_is_still_read(tmp_path, monkeypatch):
    """py-spy can read a frame name while the process changes it: its raw output then holds
    bytes that are not UTF-8 (a sitting stopped on one at row 4b). They are replaced, and the
    samples around them still count."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    profiles = importlib.import_module("profiles")
    raw = tmp_path / "raw.txt"
    raw.write_bytes(b'process 1:"gunicorn";get (restapi/views.py);ab\xfbc (x.py) 4\n')
    stacks = profiles.parse_raw(profiles.read_raw(raw))
    assert sum(stacks.values()) == 4
