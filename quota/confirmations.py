"""Delivery confirmations that wait (PostgreSQL): the holds of delivered answers, deleted by the
process's next charge instead of by a statement of their own.

A Free answer cost two statements: the charge (with its hold) and, once the answer was written,
the hold's deletion. The deletion now goes to this per-process queue; the next charge takes the
queue and deletes those holds in its own statement (quota/services.py, `_charge_and_hold`), so a
busy process sends one statement per Free answer. A quiet process is covered by a flusher
thread: holds queued more than FLUSH_AFTER_SECONDS ago and not yet carried are deleted on a
connection of its own, closed after every flush (PgBouncer in transaction mode, see
docs/deployment.md), and whatever is left when the process exits is deleted then (atexit).

What it costs: a queued hold is unexpired, so its records count as used (`quota_status`, the
headers: exact). A worker killed (SIGKILL, OOM) before its queue was sent loses at most about
FLUSH_AFTER_SECONDS of confirmations; those holds expire after QUOTA_HOLD_SECONDS and their
records are given back to the caller, as for an answer that never went out: the rule errs on
the caller's side, as it already did for a worker killed after writing an answer.

Every deleted hold leaves a dead row, and every charge sums the caller's expired holds over an
index range that ends at `now`, which holds them all until a VACUUM removes them. With
autovacuum off, or between its passes (a minute at least), a busy Free key's charge walked
ever more of them: after a benchmark sitting 56,464 dead rows beside 31 live ones, and the sum
read 276 pages (0.6 ms, 5.8 ms the first time) where one would do. So each process, once it
has deleted VACUUM_EVERY holds, has its flusher VACUUM the holds table (SKIP_LOCKED: one
process at a time; a table of a few live rows, done in milliseconds), on the flusher's own
connection, in autocommit as VACUUM requires.
"""

import atexit
import logging
import os
import threading
import time

from django.db import connection

from quota.models import QuotaHold

log = logging.getLogger(__name__)

# A queued confirmation no charge has carried after this many seconds is sent by the flusher.
FLUSH_AFTER_SECONDS = 1.0
# Holds this process deletes between two VACUUMs of the holds table.
VACUUM_EVERY = 5_000

VACUUM_SQL = f"VACUUM (SKIP_LOCKED) {QuotaHold._meta.db_table}"

DELETE_SQL = f"DELETE FROM {QuotaHold._meta.db_table} WHERE id = ANY(%s::bigint[])"  # noqa: S608


def hold_ids_array(ids: list[int]) -> str:
    """The ids as one PostgreSQL array literal: a text parameter has the same type whatever the
    ids (none included), so the statement carrying it stays one prepared statement (psycopg
    keys prepared statements by their parameters' types, an int list's by its largest id)."""
    return "{" + ",".join(str(int(hold_id)) for hold_id in ids) + "}"


class _Pending:
    """One process's queue: the ids, when the oldest was queued, and its flusher thread."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.ids: list[int] = []
        self.oldest = 0.0  # time.monotonic() when the first of `ids` was queued
        self.flusher: threading.Thread | None = None
        self.deleted = 0  # holds deleted since this process's last VACUUM of their table
        self.vacuum_due = False
        # Held while a flush deletes what it took: a `quota_confirm_pending` finds them
        # deleted, not half-way (the flusher's and the tests' calls alike).
        self.sending = threading.Lock()


_pending = _Pending()


def _new_queue_after_fork() -> None:
    # A forked child (a gunicorn worker) starts with an empty queue, a lock nobody holds and
    # no flusher: the parent's queued ids stay the parent's to send.
    global _pending
    _pending = _Pending()


os.register_at_fork(after_in_child=_new_queue_after_fork)


def pending_add(ids: list[int]) -> None:
    """Queue the holds of a delivered answer for deletion; starts the flusher on first use."""
    if not ids:
        return
    pending = _pending
    with pending.changed:
        first = not pending.ids
        if first:
            pending.oldest = time.monotonic()
        pending.ids.extend(ids)
        if pending.flusher is None:
            pending.flusher = threading.Thread(
                target=_flush_when_quiet, args=(pending,), name="quota-confirmations", daemon=True
            )
            pending.flusher.start()
        if first:
            # Only an empty queue leaves the flusher waiting without a deadline; otherwise it
            # already waits for the oldest id's, which this add does not move (no wake-up a
            # Free answer).
            pending.changed.notify()


def holds_deleted(count: int) -> None:
    """`count` holds were deleted (by a charge or a flush); past VACUUM_EVERY since the last
    VACUUM, the flusher runs one."""
    if not count:
        return
    pending = _pending
    with pending.changed:
        pending.deleted += count
        if pending.deleted >= VACUUM_EVERY and pending.flusher is not None:
            pending.deleted = 0
            pending.vacuum_due = True
            pending.changed.notify()


def pending_take() -> list[int]:
    """Every queued id, the queue emptied: the caller deletes them or gives them back."""
    pending = _pending
    with pending.changed:
        ids, pending.ids = pending.ids, []
    return ids


def pending_discard() -> None:
    """Forget the queue without deleting anything (the test suite, between tests: the test
    database is rolled back or flushed anyway)."""
    pending_take()


def quota_confirm_pending() -> int:
    """Delete the holds of every delivered answer still queued, now, on this thread's
    connection (a flush under way is waited for); how many. On failure they are queued again.
    Holds a charge in flight carries are that statement's."""
    with _pending.sending:
        ids = pending_take()
        if ids:
            try:
                with connection.cursor() as cursor:
                    cursor.execute(DELETE_SQL, [hold_ids_array(ids)])
            except BaseException:
                pending_add(ids)
                raise
            holds_deleted(len(ids))
    return len(ids)


def _vacuum_holds() -> None:
    """VACUUM the holds table on this thread's connection (autocommit: the flusher's)."""
    with connection.cursor() as cursor:
        cursor.execute(VACUUM_SQL)


def _flush_when_quiet(pending: _Pending) -> None:
    """The flusher: sends what no charge carried within FLUSH_AFTER_SECONDS, and VACUUMs the
    holds table when due. Never raises (a failed flush is logged, its ids queued again and
    retried a moment later; a failed VACUUM waits for the next VACUUM_EVERY)."""
    while True:
        try:
            with pending.changed:
                while not pending.vacuum_due and (
                    not pending.ids or time.monotonic() < pending.oldest + FLUSH_AFTER_SECONDS
                ):
                    wait = pending.oldest + FLUSH_AFTER_SECONDS - time.monotonic()
                    pending.changed.wait(wait if pending.ids else None)
                vacuum, pending.vacuum_due = pending.vacuum_due, False
            quota_confirm_pending()
            if vacuum:
                _vacuum_holds()
        except Exception:
            log.warning("Delivered holds not confirmed yet; retrying.", exc_info=True)
        finally:
            # This thread's connection is never kept: PgBouncer in transaction mode, and no
            # idle session held for a flush a second.
            try:
                connection.close()
            except Exception:
                log.warning("Closing the quota flusher's connection failed.", exc_info=True)


def _confirm_at_exit() -> None:
    if not _pending.ids:
        return
    try:
        quota_confirm_pending()
        connection.close()
    except Exception:
        log.warning(
            "Delivered holds not confirmed at exit: they expire and are given back.",
            exc_info=True,
        )


atexit.register(_confirm_at_exit)
