"""The writes of the "under writes" rows of `make bench` (issue 32): a process beside gunicorn
that does what a deployment's refresh worker and its founders do.

- Syncs at the refresh worker's production rate for the dataset: every verified startup once
  an hour, spread evenly (`verified / 3600` a second: ~11/s at 100,000 startups, ~111/s at
  1,000,000), each through `verification.services.revenue_sync`, the refresh worker's own
  call (the demo provider answers in-process: no network, so one process can keep the rate
  where real providers would need several workers to overlap their waits).
- One founder edit a second: `founders.services.startup_update`, the dashboard's own call,
  moving a random startup's self-reported MRR (a visible change: its rank moves).

Run as `python manage.py shell -c "from bench.writes import run; run(rate, edits)"`; it writes
until terminated, then prints one JSON line: what it did and how far it fell behind.
"""

import json
import random
import signal
import time

from django.db import close_old_connections
from django.utils import timezone

from accounts.models import User
from demo.seed import DEMO_OWNER_PREFIX
from founders.services import PROFILE_FIELDS, startup_update
from startups.models import Startup
from verification.models import ProviderConnection
from verification.services import revenue_sync

READY = "writing"


def production_rate(verified: int) -> float:
    """Syncs a second that keep the hourly promise for `verified` startups."""
    return verified / 3600


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


def _edit(startup_id: int, rng: random.Random) -> None:
    startup = Startup.objects.get(pk=startup_id)
    profile = {name: getattr(startup, name) for name in PROFILE_FIELDS}
    startup_update(startup=startup, profile=profile, mrr=rng.randrange(0, 50_000))


def run(rate: float | None = None, edits_per_second: float = 1.0, seed: int = 32) -> None:
    """Write until SIGTERM: `rate` syncs a second (None: the production rate for the dataset)
    and `edits_per_second` founder edits, on a fixed schedule (a late write runs at once;
    how late the schedule got is reported)."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    rng = random.Random(seed)
    connections, self_reported = _pools()
    rate = production_rate(len(connections)) if rate is None else rate
    print(READY, flush=True)  # the harness measures from here (reading the pools takes seconds)
    started = time.monotonic()
    done = {"syncs": 0, "edits": 0, "sync_errors": 0, "edit_errors": 0, "worst_lag_s": 0.0}
    next_sync, next_edit, position = started, started, 0
    while not stop:
        now = time.monotonic()
        due = min(next_sync if rate > 0 else float("inf"), next_edit)
        if due > now:
            time.sleep(min(due - now, 0.05))
            continue
        done["worst_lag_s"] = max(done["worst_lag_s"], now - due)
        close_old_connections()
        if rate > 0 and next_sync <= now and connections:
            try:
                _sync(connections[position % len(connections)])
            except Exception:  # noqa: BLE001 - counted: the bench reports it
                done["sync_errors"] += 1
            done["syncs"] += 1
            position += 1
            next_sync += 1 / rate
        if edits_per_second > 0 and next_edit <= now and self_reported:
            try:
                _edit(rng.choice(self_reported), rng)
            except Exception:  # noqa: BLE001
                done["edit_errors"] += 1
            done["edits"] += 1
            next_edit += 1 / edits_per_second
    seconds = time.monotonic() - started
    done.update(
        seconds=round(seconds, 1),
        target_syncs_per_s=round(rate, 2),
        syncs_per_s=round(done["syncs"] / seconds, 2) if seconds else 0,
        edits_per_s=round(done["edits"] / seconds, 2) if seconds else 0,
        worst_lag_s=round(done["worst_lag_s"], 3),
    )
    print(json.dumps(done), flush=True)
