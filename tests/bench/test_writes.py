"""The writer of `make bench`'s "under writes" rows (bench/writes.py) overlaps its syncs as the
refresh worker does (verification/threads.py), keeps its schedule's rate where one sync at a
time could not, and counts each write once; run as the bench runs it, it says when it writes
and prints its summary on SIGTERM."""

import importlib
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from django.utils import timezone

from bench import writes
from demo.seed import seed_demo
from tests.support.processes import process_env, skip_unless_the_database_can_be_shared
from verification.models import ProviderConnection

# The writer's threads share the test database with the suite's own connection.
pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
WAIT = 0.25  # seconds each sync waits for its provider, as across a network
RATE = 24  # syncs a second: ~6 in flight at WAIT; one at a time makes 4
SECONDS = 1.5
THREADS = 8


def test_the_writer_overlaps_syncs_to_keep_its_rate_and_counts_each_once(monkeypatch):
    seed_demo(40)
    pools = writes._pools()
    connections, self_reported = pools
    assert len(connections) >= 3 and self_reported
    synced, on, lock = [], set(), threading.Lock()
    real = writes.revenue_sync

    def across_the_network(*, connection: ProviderConnection, now):
        threading.Event().wait(WAIT)
        with lock:
            synced.append(connection.pk)
            on.add(id(writes.db_connections["default"]))  # this thread's own
        return real(connection=connection, now=now)

    monkeypatch.setattr(writes, "revenue_sync", across_the_network)
    started = timezone.now()
    deadline = time.monotonic() + SECONDS
    done = writes.write(RATE, 2, pools, threads=THREADS, stop=lambda: time.monotonic() > deadline)

    # Overlapped, on connections of their own: the rate needs ~6 in flight.
    assert 2 <= done["max_syncs_in_flight"] <= THREADS and len(on) >= 2
    # Kept the rate: one at a time would have made at most SECONDS / WAIT + 1 = 7 syncs.
    assert done["syncs"] >= RATE * SECONDS / 2, done
    # Each sync the schedule handed out ran and was counted once, every connection in turn.
    assert done["syncs"] == len(synced) and done["sync_errors"] == 0, done
    in_turn = [connections[n % len(connections)] for n in range(done["syncs"])]
    assert Counter(synced) == Counter(in_turn)
    stamped = ProviderConnection.objects.filter(last_synced_at__gte=started)
    assert set(stamped.values_list("pk", flat=True)) == set(synced)
    # The edits went on beside them.
    assert done["edits"] >= 2 and done["edit_errors"] == 0, done
    assert done["target_syncs_per_s"] == RATE and done["concurrency"] == THREADS


def test_one_thread_writes_in_the_callers_thread_one_at_a_time(monkeypatch):
    seed_demo(20)
    pools = writes._pools()
    seen = set()
    real = writes.revenue_sync

    def recorded(*, connection: ProviderConnection, now):
        seen.add(threading.get_ident())
        return real(connection=connection, now=now)

    monkeypatch.setattr(writes, "revenue_sync", recorded)
    deadline = time.monotonic() + 0.5
    done = writes.write(20, 0, pools, threads=1, stop=lambda: time.monotonic() > deadline)
    assert done["syncs"] >= 2 and done["sync_errors"] == 0 and done["edits"] == 0, done
    assert done["max_syncs_in_flight"] == 1 and seen == {threading.get_ident()}


def test_the_writer_process_says_when_it_writes_and_sums_up_on_sigterm(monkeypatch):
    # As `make bench` runs it (bench/underwrites.py): it answers once its pools are read,
    # writes until SIGTERM, then sums up in one JSON line.
    skip_unless_the_database_can_be_shared()
    seed_demo(20)
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    underwrites = importlib.import_module("underwrites")
    monkeypatch.setattr(underwrites, "RATE", "20")
    env = {**process_env(), "BENCH_WRITER_CONCURRENCY": "4"}
    started = timezone.now()
    writer = underwrites.start(sys.executable, ROOT, env)
    try:
        deadline = time.monotonic() + 30
        while not ProviderConnection.objects.filter(last_synced_at__gte=started).exists():
            assert time.monotonic() < deadline, "the writer synced nothing"
            time.sleep(0.1)
        done = underwrites.stop(writer)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0, done
    assert done["syncs"] >= 1 and done["sync_errors"] == 0 and done["concurrency"] == 4, done
    assert done["target_syncs_per_s"] == 20 and "worst_lag_s" in done, done


def test_threads_as_littles_law_asks_for_the_rate(monkeypatch):
    # docs/deployment.md: in flight = syncs a second x seconds a sync (here twice over), at
    # least 2, at most the refresh worker's default; BENCH_WRITER_CONCURRENCY decides instead.
    monkeypatch.delenv("BENCH_WRITER_CONCURRENCY", raising=False)
    assert writes.concurrency(11.15) == 2  # 100,000 startups
    assert writes.concurrency(111.1) == 6  # 1,000,000
    assert writes.concurrency(10_000) == 16
    monkeypatch.setenv("BENCH_WRITER_CONCURRENCY", "3")
    assert writes.concurrency(111.1) == 3
