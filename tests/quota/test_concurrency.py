"""The allowance is exact under parallel load: threads on the service, and two gunicorn
instances sharing the test database, hammered by one key (PostgreSQL and SQLite)."""

import random
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.db import connections
from django.test import Client

from quota.confirmations import quota_confirm_pending
from quota.models import MonthlyUsage, QuotaHold
from quota.plans import FREE
from quota.services import Caller, QuotaExceeded, quota_refund, quota_reserve
from tests.support.factories import bearer, make_account, make_api_key, make_startups
from tests.support.processes import process_env, skip_unless_the_database_can_be_shared

ROOT = Path(__file__).resolve().parents[2]
THREADS = 12


def run_in_threads(work, count: int = THREADS) -> None:
    """Run `work()` in `count` threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def runner() -> None:
        try:
            barrier.wait()
            work()
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=runner) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


@pytest.mark.django_db(transaction=True)
def test_parallel_reservations_grant_exactly_the_allowance():
    caller = Caller(plan=FREE, account_id=make_account().pk)
    granted: list[int] = []

    def work() -> None:
        while True:
            try:
                granted.append(quota_reserve(caller=caller, wanted=7).granted)
            except QuotaExceeded:
                return

    run_in_threads(work)
    assert sum(granted) == 100
    assert MonthlyUsage.objects.get(account_id=caller.account_id).used == 100


@pytest.mark.django_db(transaction=True)
def test_parallel_reservations_with_refunds_never_lose_a_count():
    caller = Caller(plan=FREE, account_id=make_account().pk)
    served: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        rng = random.Random()  # noqa: S311
        for _ in range(15):
            try:
                reservation = quota_reserve(caller=caller, wanted=rng.randint(1, 10))
            except QuotaExceeded:
                return
            kept = rng.randint(0, reservation.granted)
            quota_refund(reservation=reservation, count=reservation.granted - kept)
            with lock:
                served.append(kept)

    run_in_threads(work)
    used = MonthlyUsage.objects.get(account_id=caller.account_id).used
    assert used == sum(served)
    assert used <= 100


@pytest.mark.django_db(transaction=True)
def test_parallel_free_requests_serve_and_confirm_exactly_the_allowance():
    """Free requests of one key from many threads at once, each answer closed as a WSGI server
    would (the test client does; its delivery confirmed, on PostgreSQL without waiting for the
    WAL flush): exactly the allowance is served and counted, and no hold is left to give
    records back."""
    make_startups(15)
    key, raw = make_api_key()
    served: list[int] = []
    statuses: set[int] = set()

    def work() -> None:
        client = Client()
        while True:
            response = client.get("/api/v1/startups", {"limit": 3}, **bearer(raw))
            statuses.add(response.status_code)
            if response.status_code != 200:
                return
            served.append(len(response.json()["data"]))

    run_in_threads(work)
    assert statuses == {200, 429}
    assert sum(served) == 100
    assert MonthlyUsage.objects.get(account=key.account).used == 100
    quota_confirm_pending()  # PostgreSQL: what no charge carried yet (the flusher's work)
    assert not QuotaHold.objects.exists()


# Two real server instances


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env() -> dict[str, str]:
    """Environment pointing a gunicorn at this test run's database."""
    return {**process_env(), "DB_CONN_MAX_AGE": "0"}


@pytest.fixture
def two_servers(transactional_db):
    skip_unless_the_database_can_be_shared()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    processes, urls = [], []
    for _ in range(2):
        port = free_port()
        processes.append(
            subprocess.Popen(
                [str(gunicorn), "openstartup.wsgi", "--bind", f"127.0.0.1:{port}"]
                + ["--workers", "2", "--threads", "4", "--log-level", "warning"],
                cwd=ROOT,
                env=server_env(),
            )
        )
        urls.append(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        for url in urls:
            while True:
                try:
                    httpx.get(f"{url}/api/v1/startups/-", timeout=2)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=15)


def test_two_gunicorn_instances_serve_exactly_100_records_to_one_key(two_servers):
    make_startups(15)
    key, raw = make_api_key()
    headers = {"Authorization": f"Bearer {raw}"}

    def call(index: int) -> tuple[int, int]:
        url = two_servers[index % 2]
        response = httpx.get(f"{url}/api/v1/startups", params={"limit": 7}, headers=headers)
        served = len(response.json()["data"]) if response.status_code == 200 else 0
        return response.status_code, served

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(call, range(40)))
    statuses = {status for status, _ in results}
    assert statuses <= {200, 429}
    assert 429 in statuses
    assert sum(served for _, served in results) == 100
    assert MonthlyUsage.objects.get(account=key.account).used == 100
