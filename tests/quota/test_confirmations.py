"""One statement per Free answer on PostgreSQL: a delivered answer's hold is deleted by the
process's next charge, or by the flusher when the process is quiet (quota/confirmations.py)."""

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import DatabaseError, connection

from quota import confirmations
from quota.confirmations import pending_add, pending_take, quota_confirm_pending
from quota.models import MonthlyUsage, QuotaHold
from quota.plans import FREE
from quota.services import Caller, quota_reserve
from tests.support.factories import bearer, make_api_key, make_startups

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="queued confirmations: Postgres"),
    pytest.mark.django_db(transaction=True),  # as in production: autocommit, no test transaction
]

LIST = "/api/v1/startups"


@pytest.fixture
def no_flusher(monkeypatch):
    """The flusher waits an hour: only the charges (or the test) send the queue."""
    monkeypatch.setattr(confirmations, "FLUSH_AFTER_SECONDS", 3600.0)


@contextmanager
def quota_statements() -> Iterator[list[str]]:
    """The statements sent on the quota's tables, as their text (a prepared statement's is not
    in the query log)."""
    sent: list[str] = []

    def record(execute, sql, params, many, context):
        if "quota_" in sql:
            sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield sent


def eventually(condition, timeout: float = 30.0) -> bool:
    """Poll `condition` until it holds (a generous limit: this is not a speed test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_free_answer_costs_one_quota_statement_which_confirms_the_previous_one(
    client, no_flusher
):
    make_startups(12)
    key, raw = make_api_key()
    client.get(LIST, **bearer(raw))  # first use: the month's row, the key's last use
    client.get(LIST, **bearer(raw))
    quota_confirm_pending()
    assert not QuotaHold.objects.exists()
    with quota_statements() as sent:
        first = client.get(LIST, **bearer(raw))
    assert first.status_code == 200
    assert len(sent) == 1, sent
    (held,) = QuotaHold.objects.values_list("pk", flat=True)  # delivered, its deletion queued
    assert first["X-Service-Quota-Remaining"] == "70"
    with quota_statements() as sent:
        second = client.get(LIST, **bearer(raw))
    (charge,) = sent
    assert charge.startswith("WITH deleted AS (DELETE FROM quota_quotahold")
    assert not QuotaHold.objects.filter(pk=held).exists()  # confirmed by the second charge
    assert QuotaHold.objects.count() == 1  # the second answer's, queued in turn
    assert second["X-Service-Quota-Remaining"] == "60"
    assert MonthlyUsage.objects.get(account=key.account).used == 40


def test_a_charge_that_does_not_fit_still_confirms_the_queued_holds(client, no_flusher):
    make_startups(12)
    _, raw = make_api_key()
    for _ in range(10):
        assert client.get(LIST, **bearer(raw)).status_code == 200
    assert QuotaHold.objects.count() == 1  # the last answer's, queued
    refused = client.get(LIST, **bearer(raw))
    assert refused.status_code == 429
    assert refused["X-Service-Quota-Remaining"] == "0"
    assert not QuotaHold.objects.exists()
    assert pending_take() == []


def test_queued_confirmations_survive_a_failing_charge(client, no_flusher):
    make_startups(12)
    key, raw = make_api_key()
    client.get(LIST, **bearer(raw))
    (held,) = QuotaHold.objects.values_list("pk", flat=True)

    def charge_fails(execute, sql, params, many, context):
        if sql.startswith("WITH deleted AS"):
            raise DatabaseError("the charge failed")
        return execute(sql, params, many, context)

    caller = Caller(plan=FREE, account_id=key.account_id)
    with connection.execute_wrapper(charge_fails), pytest.raises(DatabaseError):
        quota_reserve(caller=caller, wanted=1)
    assert QuotaHold.objects.filter(pk=held).exists()
    assert quota_confirm_pending() == 1  # still queued: sent now
    assert not QuotaHold.objects.exists()
    assert MonthlyUsage.objects.get(account=key.account).used == 10  # delivered: still counted


def test_the_flusher_confirms_a_quiet_process_and_keeps_no_connection(
    client, no_flusher, monkeypatch
):
    make_startups(12)
    key, raw = make_api_key()
    response = client.get(LIST, **bearer(raw))
    assert response.status_code == 200
    assert QuotaHold.objects.exists()  # delivered, its deletion queued: no request follows
    monkeypatch.setattr(confirmations, "FLUSH_AFTER_SECONDS", 0.05)
    pending_add(pending_take())  # queued again: the flusher wakes and sees the shorter delay
    assert eventually(lambda: not QuotaHold.objects.exists())
    assert MonthlyUsage.objects.get(account=key.account).used == 10

    def other_sessions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'"  # not autovacuum
            )
            return cursor.fetchone()[0]

    assert eventually(lambda: other_sessions() == 0)  # its connection closed after the flush


def manual_vacuums_of_holds() -> int:
    """VACUUMs of the holds table run by a session (autovacuum's are counted apart)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = %s",
            [QuotaHold._meta.db_table],
        )
        return cursor.fetchone()[0]


def test_a_process_that_deleted_many_holds_vacuums_their_table(client, monkeypatch):
    """Each deleted hold leaves a dead row that every later charge's expired-holds sum walks
    until a VACUUM removes it (autovacuum may be off, and runs a minute apart at best): once
    the process has deleted VACUUM_EVERY holds, its flusher runs one."""
    monkeypatch.setattr(confirmations, "VACUUM_EVERY", 3)
    make_startups(3)
    _, raw = make_api_key()
    before = manual_vacuums_of_holds()
    for _ in range(5):  # each charge deletes the hold of the answer before it
        assert client.get(f"{LIST}?limit=1", **bearer(raw)).status_code == 200
    assert eventually(lambda: manual_vacuums_of_holds() > before)
