"""The refresh worker overlaps its syncs' provider waits (`sync_revenue --concurrency N`), and
still syncs every due connection exactly once per round, also with two workers side by side.

Each provider call goes to the local fake provider server (tests/support/verification_fakes.py),
which answers after a delay as a real provider across the network does.
"""

import io
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from startups.models import Startup
from tests.support.processes import process_env, skip_unless_the_database_can_be_shared
from tests.support.verification_fakes import FakeProviders, stripe_account
from verification.connections import provider_connection_connect
from verification.management.commands import sync_revenue
from verification.models import ProviderConnection

# The suite's own process shares its database with the command's threads and processes.
pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
STARTUPS = 40
LATENCY = 0.2  # seconds before the fake answers each startup's subscription list
CHARGED = 1793534400  # 2026-11-01 12:00 UTC


def connect_many(fake: FakeProviders, *, gate=None) -> list[str]:
    """STARTUPS startups, each connected to its own Stripe account whose subscription list
    answers after LATENCY (after `gate()` first); their slugs."""
    slugs = []
    for n in range(STARTUPS):
        slug = f"co-{n:02d}"
        token = f"rk_live_{slug}"
        fake.account(token, stripe_account(charged=CHARGED))
        startup = Startup.objects.create(name=slug, slug=slug)
        provider_connection_connect(
            startup=startup, provider="stripe", raw_key=token, api_base=fake.base_url
        )
        slugs.append(slug)
    with fake.lock:  # connecting checked each key; count the syncs only
        fake.requests.clear()
        fake.headers.clear()
    for routes in fake.accounts.values():
        routes["/v1/subscriptions"] = slowly(routes["/v1/subscriptions"], gate=gate)
    return slugs


def slowly(route, *, gate=None):
    def answer(query):
        if gate is not None:
            gate()
        threading.Event().wait(LATENCY)  # not time.sleep: the loop's wait is patched there
        return route(query)

    return answer


def syncs_per_account(fake: FakeProviders) -> Counter:
    """How many syncs reached each account (one subscription list per sync)."""
    with fake.lock:
        return Counter(token for token, path, _ in fake.requests if path == "/v1/subscriptions")


def assert_each_synced_once(fake: FakeProviders, slugs: list[str], output: str) -> None:
    assert syncs_per_account(fake) == Counter({f"rk_live_{slug}": 1 for slug in slugs})
    stored = dict(ProviderConnection.objects.values_list("startup__slug", "status"))
    assert stored == dict.fromkeys(slugs, "ok")
    assert not ProviderConnection.objects.filter(last_synced_at__isnull=True).exists()
    assert ProviderConnection.objects.filter(lease_owner__isnull=False).count() == 0
    lines = Counter(line for line in output.splitlines() if line.endswith(": ok"))
    assert lines == Counter({f"{slug}: ok": 1 for slug in slugs}), output


def test_the_worker_overlaps_provider_waits_and_syncs_each_connection_once(
    fake_providers, monkeypatch
):
    # One round of the refresh worker (`--loop`) over 40 connections whose provider takes
    # 200 ms: one at a time that is at least 8 s of waiting; 8 at once finish in well under
    # half of it, and every connection is synced exactly once, its line printed once.
    slugs = connect_many(fake_providers)

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt  # the round is over; the worker would now wait

    monkeypatch.setattr(sync_revenue.time, "sleep", sleep)
    out = io.StringIO()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        call_command("sync_revenue", "--all", "--loop", "--concurrency", "8", stdout=out)
    elapsed = time.monotonic() - started
    assert elapsed < STARTUPS * LATENCY / 2, f"{elapsed:.1f} s: the syncs did not overlap"
    assert_each_synced_once(fake_providers, slugs, out.getvalue())


def test_sync_all_once_overlaps_provider_waits_and_counts_every_startup(fake_providers):
    slugs = connect_many(fake_providers)
    out = io.StringIO()
    started = time.monotonic()
    call_command("sync_revenue", "--all", "--concurrency", "8", stdout=out)
    elapsed = time.monotonic() - started
    assert elapsed < STARTUPS * LATENCY / 2, f"{elapsed:.1f} s: the syncs did not overlap"
    assert_each_synced_once(fake_providers, slugs, out.getvalue())
    assert out.getvalue().splitlines()[-1] == f"Synced {STARTUPS} of {STARTUPS} startup(s)."


def test_one_failing_sync_does_not_stop_the_round(fake_providers):
    # A provider that answers nonsense to one startup: that startup records the error, every
    # other startup is synced, and the round's summary counts it as failed.
    slugs = connect_many(fake_providers)
    fake_providers.accounts["rk_live_co-07"]["/v1/balance_transactions"] = lambda query: (
        200,
        {},
        {"object": "list", "data": [{"id": "txn_x", "type": "charge"}], "has_more": False},
    )
    out = io.StringIO()
    call_command("sync_revenue", "--all", "--concurrency", "8", stdout=out)
    statuses = dict(ProviderConnection.objects.values_list("startup__slug", "status"))
    assert statuses.pop("co-07") == "error"
    assert statuses == dict.fromkeys([s for s in slugs if s != "co-07"], "ok")
    assert out.getvalue().splitlines()[-1] == f"Synced {STARTUPS - 1} of {STARTUPS} startup(s)."


def test_concurrency_must_be_positive(fake_providers):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--concurrency"):
        call_command("sync_revenue", "--all", "--concurrency", "0", stdout=io.StringIO())


def test_two_workers_side_by_side_never_sync_one_connection_twice(fake_providers):
    # Two refresh worker processes, 4 syncs at once each, start their rounds over the same 40
    # due connections. The fake holds the first provider calls until 5 are waiting at once
    # (more than one worker makes), so both are provably syncing side by side; the lease
    # still gives each connection to one worker only.
    skip_unless_the_database_can_be_shared()
    both_syncing = threading.Barrier(5, timeout=60)
    held = []

    def gate() -> None:
        with fake_providers.lock:
            held.append(1)
            first = len(held) <= 5
        if first:
            both_syncing.wait()

    slugs = connect_many(fake_providers, gate=gate)
    command = [sys.executable, "manage.py", "sync_revenue", "--all", "--loop", "--concurrency", "4"]
    env = {**process_env(), "PYTHONUNBUFFERED": "1"}
    workers = [
        subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        deadline = time.monotonic() + 90
        while ProviderConnection.objects.filter(last_synced_at__isnull=True).exists():
            assert time.monotonic() < deadline, "the workers did not finish their rounds"
            assert all(worker.poll() is None for worker in workers), workers[0].stderr.read()
            time.sleep(0.2)
        time.sleep(1)  # a second sync, were there one, would have reached the provider by now
    finally:
        for worker in workers:
            worker.terminate()
        outputs = [worker.communicate(timeout=30)[0] for worker in workers]
    assert all(": ok" in output for output in outputs), outputs  # both synced some
    assert_each_synced_once(fake_providers, slugs, "".join(outputs))
