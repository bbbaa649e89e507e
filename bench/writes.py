"""The writes of the "under writes" rows of `make bench` (issue 32): a process beside gunicorn
that does what a deployment's refresh worker and its founders do.

- Syncs at the refresh worker's production rate for the dataset: every verified startup once
  an hour, spread evenly (`verified / 3600` a second: ~11/s at 100,000 startups, ~111/s at
  1,000,000), each through `verification.services.revenue_sync`, the refresh worker's own
  call, overlapped as the worker overlaps them: up to `--concurrency` at once in threads
  (verification/threads.py, the worker's own code), each on a database connection of its
  own; as many as docs/deployment.md's Little's law asks for the rate (`concurrency`:
  6 at 111/s, at most the `Procfile`'s 16) or BENCH_WRITER_CONCURRENCY. The demo provider
  answers in-process, so the threads overlap the syncs' database round trips, not provider
  waits.
- One founder edit a second: `founders.services.startup_update`, the dashboard's own call,
  moving a random startup's self-reported MRR (a visible change: its rank moves).

Run as `python manage.py shell -c "from bench.writes import run; run(rate, edits)"`; it writes
until terminated, then prints one JSON line: what it did and how far it fell behind.
"""

import json
import math
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator

from django.db import connections as db_connections
from django.utils import timezone

from accounts.models import User
from demo.seed import DEMO_OWNER_PREFIX
from founders.services import PROFILE_FIELDS, startup_update
from startups.models import Startup
from verification.management.commands.sync_revenue import DEFAULT_CONCURRENCY
from verification.models import ProviderConnection
from verification.services import revenue_sync
from verification.threads import in_threads

READY = "writing"
IDLE = 0.05  # the schedule's longest nap: how soon it notices it was told to stop
# A demo-provider sync's wall time on the 2-CPU bench machine while gunicorn and PostgreSQL
# serve the rows (one at a time it made 43.6 syncs/s there at 1,000,000): no provider wait,
# only its ~11 database round trips and ~6-13 ms of Python. More threads than the rate needs
# only cost CPU in one process: 16 took ~6-8 ms of Python a sync where 2-4 took ~5.
SECONDS_PER_SYNC = 0.025


def production_rate(verified: int) -> float:
    """Syncs a second that keep the hourly promise for `verified` startups."""
    return verified / 3600


def concurrency(rate: float) -> int:
    """Writes in flight at once: BENCH_WRITER_CONCURRENCY, else what docs/deployment.md's
    Little's law asks for the rate (in flight = syncs a second x seconds a sync), twice over
    for headroom, at least 2 and at most the refresh worker's default (the `Procfile`'s 16)."""
    if wanted := os.environ.get("BENCH_WRITER_CONCURRENCY"):
        return int(wanted)
    return max(2, min(DEFAULT_CONCURRENCY, math.ceil(2 * rate * SECONDS_PER_SYNC)))


def _pools() -> tuple[list[int], list[int]]:
    # The demo founders confirm their e-mail (`startup_update` refuses a founder who has not,
    # and the bench would measure no edit at all); unclaimed startups have no one to edit them.
    owners = User.objects.filter(username__startswith=DEMO_OWNER_PREFIX)
    owners.filter(email_confirmed_at__isnull=True).update(email_confirmed_at=timezone.now())
    connections = list(ProviderConnection.objects.order_by("id").values_list("id", flat=True))
    self_reported = list(
        Startup.objects.filter(is_published=True, provider_connection__isnull=True)
        .filter(owner__username__startswith=DEMO_OWNER_PREFIX)
        .order_by("id")
        .values_list("id", flat=True)
    )
    return connections, self_reported


def _sync(connection_id: int) -> None:
    connection = ProviderConnection.objects.select_related("startup").get(pk=connection_id)
    revenue_sync(connection=connection, now=timezone.now())


def _edit(startup_id: int, mrr: int) -> None:
    startup = Startup.objects.get(pk=startup_id)
    profile = {name: getattr(startup, name) for name in PROFILE_FIELDS}
    startup_update(startup=startup, profile=profile, mrr=mrr)


class Tally:
    """What the writer did, counted once per write by whichever thread did it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = {"syncs": 0, "edits": 0, "sync_errors": 0, "edit_errors": 0}
        self.worst_lag_s = 0.0
        self.in_flight = self.max_in_flight = 0  # syncs

    def late(self, seconds: float) -> None:
        self.worst_lag_s = max(self.worst_lag_s, seconds)  # the schedule runs one at a time

    def __call__(self, item: tuple[str, tuple]) -> None:
        """One write (a thread's `work`): a sync or an edit; a failure is counted, not raised."""
        kind, args = item
        if kind == "sync":
            with self.lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
        failed = False
        try:
            _sync(*args) if kind == "sync" else _edit(*args)
        except Exception:  # noqa: BLE001 - counted: the bench reports it
            failed = True
        with self.lock:
            self.done[f"{kind}s"] += 1
            self.done[f"{kind}_errors"] += failed
            self.in_flight -= kind == "sync"


def schedule(
    rate: float,
    edits_per_second: float,
    pools: tuple[list[int], list[int]],
    rng: random.Random,
    stop: Callable[[], bool],
    tally: Tally,
) -> Iterator[tuple[str, tuple]]:
    """The writes, each handed out when it is due: `rate` syncs a second, every connection in
    turn (so each once an hour at the production rate), and `edits_per_second` founder edits.
    A thread asks for the next write when it is free; a write nobody was free for when it fell
    due goes out late, and the worst lateness is the tally's `worst_lag_s`. Ends at `stop()`."""
    connections, self_reported = pools
    started, never = time.monotonic(), float("inf")
    syncing, editing = rate > 0 and connections, edits_per_second > 0 and self_reported
    next_sync, sync_every = (started, 1 / rate) if syncing else (never, never)
    next_edit, edit_every = (started, 1 / edits_per_second) if editing else (never, never)
    position = 0
    while not stop():
        now = time.monotonic()
        due = min(next_sync, next_edit)
        if due > now:
            time.sleep(min(due - now, IDLE))
            continue
        tally.late(now - due)
        if next_sync <= next_edit:
            yield "sync", (connections[position % len(connections)],)
            position += 1
            next_sync += sync_every
        else:
            yield "edit", (rng.choice(self_reported), rng.randrange(0, 50_000))
            next_edit += edit_every


def write(
    rate: float,
    edits_per_second: float,
    pools: tuple[list[int], list[int]],
    *,
    threads: int,
    stop: Callable[[], bool],
    seed: int = 32,
) -> dict:
    """Write on the schedule until `stop()`, up to `threads` writes at once (the refresh
    worker's threads, verification/threads.py: each on its own database connection, closed
    at its end); the summary."""
    tally = Tally()
    started = time.monotonic()
    writes = schedule(rate, edits_per_second, pools, random.Random(seed), stop, tally)
    in_threads(writes, tally, concurrency=threads)
    seconds = time.monotonic() - started
    return {
        **tally.done,
        "worst_lag_s": round(tally.worst_lag_s, 3),
        "seconds": round(seconds, 1),
        "concurrency": threads,
        "max_syncs_in_flight": tally.max_in_flight,
        "target_syncs_per_s": round(rate, 2),
        "syncs_per_s": round(tally.done["syncs"] / seconds, 2) if seconds else 0,
        "edits_per_s": round(tally.done["edits"] / seconds, 2) if seconds else 0,
    }


def run(rate: float | None = None, edits_per_second: float = 1.0) -> None:
    """Write until SIGTERM: `rate` syncs a second (None: the production rate for the dataset)
    and `edits_per_second` founder edits, on a fixed schedule, up to `concurrency(rate)` at once
    (a late write goes to the first thread free; how late the schedule got is reported)."""
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    pools = _pools()
    rate = production_rate(len(pools[0])) if rate is None else rate
    print(READY, flush=True)  # the harness measures from here (reading the pools takes seconds)
    done: dict = {}

    def writer() -> None:
        try:
            done.update(
                write(rate, edits_per_second, pools, threads=concurrency(rate), stop=stopped.is_set)
            )
        finally:
            db_connections.close_all()  # this thread's own (with one thread, it writes on it)

    # The writes run in a thread of their own: Python runs the SIGTERM handler in the main
    # thread only, between its own steps, which a wait without a timeout would never take.
    thread = threading.Thread(target=writer, name="writer")
    thread.start()
    while thread.is_alive():
        thread.join(IDLE)
    print(json.dumps(done), flush=True)
