"""The monthly allowance: records served per account (or per client address) per UTC month.

Counters live in the database (`MonthlyUsage`). Every change is one conditional UPDATE, so two
processes (or two servers) never hand out more than the allowance and never lose a count:

    UPDATE quota_monthlyusage SET used = used + :n WHERE <row> AND used <= :allowance - :n

When fewer than `n` records remain the UPDATE matches nothing; we then read what is left and
retry with that smaller `n`. Unused records are given back with `used = used - :unused`.

Delivery rule (issue 17 §4): records are charged when reserved, so the allowance is never
exceeded, and given back when the answer does not reach the client. With the charge a
`QuotaHold` row is written in the same transaction; it is deleted once the answer has been
written out (the response's close, after the WSGI server sent the body). An answer that fails
(an error, a database outage) refunds everything at once; one that never goes out because the
process died leaves its hold, which expires after QUOTA_HOLD_SECONDS and is given back before
the caller is ever refused, and by `quota_release_expired` (run on every reservation refused).

One statement per Free answer (PostgreSQL): the deletion of a delivered answer's hold is not
sent on its own but queued in the process and carried by the process's next charge, as the
first CTE of the charge's statement (the flusher thread of quota/confirmations.py sends what no
charge carried within about a second, on a connection it closes after each flush). Two
statements per Free answer held Free at 0.62-0.76x Pro's rate. A queued hold is unexpired, so
its records count as used: `quota_status` and the headers stay exact. A worker killed before
its queue went out loses at most ~1 s of confirmations: those holds expire and their records
are given back to the caller (the rule errs on the caller's side). SQLite deletes at once.

Durability (PostgreSQL): the charge and the delivery confirmation of a Free request commit
asynchronously (`synchronous_commit` off for that one transaction, QUOTA_SYNCHRONOUS_COMMIT=1
turns it back on). Waiting for the WAL flush held the usage row's lock through an fsync, so
one account's requests queued behind each other's disk writes (Free at 0.44x Pro). Nothing
changes for exactness while PostgreSQL runs (the charge is seen by every other transaction
at once) nor across a Redis restart (the cache never counts). What a PostgreSQL crash or a
machine failure can cost is bounded: the commits of the last 3 x wal_writer_delay (600 ms by
default) before it may be lost, so the records of the Free answers of that window go uncounted
(a lost confirmation comes back as a hold whose records are given back when it expires).
"""

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.http import HttpResponse
from django.utils import timezone

from core.errors import QuotaExceeded
from core.formats import iso_timestamp, month_start, next_month_start_at
from core.postgresql import prepared_cursor
from quota.confirmations import (
    DELETE_SQL,
    hold_ids_array,
    holds_deleted,
    pending_add,
    pending_take,
)
from quota.models import MonthlyUsage, QuotaHold
from quota.plans import PlanLimits


@dataclass(frozen=True)
class Caller:
    """Whose allowance a request spends: an account (any of its keys) or a client address."""

    plan: PlanLimits
    account_id: int | None = None
    client: str | None = None

    def __post_init__(self) -> None:
        if (self.account_id is None) == (self.client is None):
            raise ValueError("A caller is either an account or a client address.")


@dataclass(frozen=True)
class QuotaStatus:
    """The caller's plan and, on a capped plan, this month's figures."""

    plan: PlanLimits
    used: int
    resets_at: datetime

    @property
    def limit(self) -> int | None:
        return self.plan.monthly_allowance

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)


@dataclass
class Reservation:
    """Records granted to one request; `use()` what was served, the rest is refunded."""

    caller: Caller
    month: date
    wanted: int
    granted: int
    used: int = field(default=0)
    hold_id: int | None = None  # the charge's hold until the answer is delivered
    # The caller's count this month as `quota_status` reads it, kept up to date by the charge
    # and the refund: the headers and meta need no second read of the counter.
    counted: int = 0

    @property
    def status(self) -> QuotaStatus:
        """The caller's figures as this reservation left them (refunds included)."""
        return QuotaStatus(
            plan=self.caller.plan, used=max(0, self.counted), resets_at=next_reset(self.month)
        )

    def use(self, count: int) -> None:
        if count > self.granted:
            raise ValueError(f"Used {count} records but only {self.granted} were granted.")
        self.used = count


def next_reset(now: datetime | date) -> datetime:
    """The 1st of the next UTC month, 00:00 UTC: when the allowance resets."""
    return next_month_start_at(now)


def _owner(caller: Caller) -> tuple[str, int | str]:
    """The column naming the caller's usage and hold rows (account or client address), and its
    value: what every query of this module selects the caller's rows by."""
    if caller.account_id is not None:
        return "account_id", caller.account_id
    return "client", caller.client


def _rows(*, caller: Caller, month: date) -> QuerySet[MonthlyUsage]:
    column, value = _owner(caller)
    return MonthlyUsage.objects.filter(**{column: value}, month=month)


def _quota_exceeded(*, plan: PlanLimits, now: datetime) -> QuotaExceeded:
    reset = next_reset(now)
    return QuotaExceeded(
        f"The {plan.name} plan includes {plan.monthly_allowance} records per calendar month "
        f"(UTC) and this month's are used up. The allowance resets on {iso_timestamp(reset)} "
        "(the 1st of next month, 00:00 UTC); a Pro key has no monthly cap.",
        headers={"Retry-After": str(max(1, math.ceil((reset - now).total_seconds())))},
    )


def quota_reserve(*, caller: Caller, wanted: int, now: datetime | None = None) -> Reservation:
    """Grant min(wanted, records left this month) and hold them until delivered; raise
    QuotaExceeded when none are left (after giving back expired holds). An uncapped plan gets
    everything and touches no counter."""
    now = now or timezone.now()
    month = month_start(now)
    allowance = caller.plan.monthly_allowance
    if allowance is None:
        # Records served on an uncapped plan are not counted: a Pro account that lapses
        # mid-month starts Free with only the records it spent on Free before.
        return Reservation(caller=caller, month=month, wanted=wanted, granted=wanted)
    released = False
    want = wanted
    while want > 0:
        charged = _charge_and_hold(caller=caller, month=month, records=want, now=now)
        if charged is not None:
            reservation = Reservation(caller=caller, month=month, wanted=wanted, granted=want)
            reservation.hold_id, reservation.counted = charged
            return reservation
        used = _rows(caller=caller, month=month).values_list("used", flat=True).first()
        if used is None:
            # First request of the month: create the row (a concurrent creator wins harmlessly).
            MonthlyUsage.objects.bulk_create(
                [MonthlyUsage(account_id=caller.account_id, client=caller.client, month=month)],
                ignore_conflicts=True,
            )
            continue
        # Fewer than `want` were left when the UPDATE ran: retry with what is left now.
        want = min(want, allowance - used)
        if want <= 0 and not released:
            # Before refusing: give back what answers that never went out still hold.
            released = True
            if quota_release_expired(caller=caller, now=now):
                want = wanted
    raise _quota_exceeded(plan=caller.plan, now=now)


def _charge_and_hold(
    *, caller: Caller, month: date, records: int, now: datetime
) -> tuple[int, int] | None:
    """Charge `records` if they fit the allowance and write their hold, as one unit; the
    hold's id and the month's count after the charge (as `quota_status` counts it), or None
    when they do not fit. One prepared statement on PostgreSQL (a DELETE, an UPDATE and an
    INSERT in one CTE; the same text every time, so PostgreSQL plans it once per connection),
    a transaction elsewhere. The DELETE confirms the delivered answers this process has queued
    (quota/confirmations.py): their deletion costs no statement of its own. It runs even when
    the charge does not fit (a data-modifying CTE always runs to its end); if the statement
    fails, the ids go back to the queue. Inside a transaction nothing is carried: a rollback
    would undo the deletions after the queue had let them go."""
    allowance = caller.plan.monthly_allowance
    expires = now + timedelta(seconds=settings.QUOTA_HOLD_SECONDS)
    column, key = _owner(caller)
    usage, holds = MonthlyUsage._meta.db_table, QuotaHold._meta.db_table
    undelivered, undelivered_params = _expired_holds_sql(caller, month, now)
    charge = (
        f"UPDATE {usage} SET used = used + %s "  # noqa: S608 - table names
        f"WHERE {column} = %s AND month = %s AND used <= %s RETURNING used - {undelivered}"
    )
    month_value = connection.ops.adapt_datefield_value(month)
    params = [records, key, month_value, allowance - records, *undelivered_params]
    if connection.vendor == "postgresql":
        carried = [] if connection.in_atomic_block else pending_take()
        sql = (
            f"WITH deleted AS ({DELETE_SQL}), charged AS ({charge} AS counted) "  # noqa: S608
            f"INSERT INTO {holds} (account_id, client, month, records, expires_at) "
            "SELECT %s::bigint, %s::varchar, %s::date, %s::integer, %s::timestamptz "
            f"FROM charged{_async_commit('WHERE')} RETURNING id, (SELECT counted FROM charged)"
        )
        params = [hold_ids_array(carried), *params]
        params += [caller.account_id, caller.client, month, records, expires]
        try:
            with prepared_cursor(connection) as cursor:
                cursor.execute(sql, params)
                row = cursor.fetchone()
        except BaseException:
            pending_add(carried)
            raise
        holds_deleted(len(carried))
        return None if row is None else (row[0], row[1])
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(charge, params)
            row = cursor.fetchone()
        if row is None:
            return None
        hold = QuotaHold.objects.create(
            account_id=caller.account_id,
            client=caller.client,
            month=month,
            records=records,
            expires_at=expires,
        )
        return hold.pk, row[0]


def _async_commit(keyword: str) -> str:
    """A condition (after `keyword`, WHERE or AND) that turns `synchronous_commit` off for the
    statement's own transaction (autocommit: just this statement) where it writes a row; empty
    with QUOTA_SYNCHRONOUS_COMMIT. Transaction-local, so a PgBouncer in transaction mode hands
    the connection on unchanged; see the module's docstring for what a crash can cost."""
    if settings.QUOTA_SYNCHRONOUS_COMMIT:
        return ""
    return f" {keyword} set_config('synchronous_commit', 'off', true) = 'off'"


def _expired_holds_sql(caller: Caller, month: date, now: datetime) -> tuple[str, list]:
    """Plain SQL for the records the caller's answers that never went out hold in `month`
    (their holds expired): not counted as used, they are given back. The expression and its
    parameters, for the charge and `quota_status` alike."""
    column, key = _owner(caller)
    sql = (
        f"COALESCE((SELECT SUM(records) FROM {QuotaHold._meta.db_table} "  # noqa: S608
        f"WHERE {column} = %s AND month = %s AND expires_at <= %s), 0)"
    )
    ops = connection.ops
    return sql, [key, ops.adapt_datefield_value(month), ops.adapt_datetimefield_value(now)]


def quota_release_expired(*, caller: Caller, now: datetime | None = None) -> int:
    """Give back the records of the caller's holds that expired undelivered; how many."""
    now = now or timezone.now()
    holds = _holds(caller=caller).filter(expires_at__lte=now)
    given = 0
    with transaction.atomic():
        # Locked first, so two releasers never give the same hold back twice.
        expired = list(holds.select_for_update().values_list("pk", "month", "records"))
        by_month: dict[date, int] = {}
        for _, month, records in expired:
            by_month[month] = by_month.get(month, 0) + records
        for month, records in by_month.items():
            _rows(caller=caller, month=month).update(used=F("used") - records)
            given += records
        QuotaHold.objects.filter(pk__in=[pk for pk, _, _ in expired]).delete()
    return given


def quota_refund(*, reservation: Reservation, count: int) -> None:
    """Give back `count` granted but unserved records to the reservation's month."""
    if count > 0 and reservation.caller.plan.monthly_allowance is not None:
        _rows(caller=reservation.caller, month=reservation.month).update(used=F("used") - count)
        reservation.counted -= count


def quota_preview(*, caller: Caller, wanted: int, now: datetime | None = None) -> Reservation:
    """What `quota_reserve` would grant, spending nothing (HEAD requests deliver no records);
    raises QuotaExceeded as it would when none are left."""
    now = now or timezone.now()
    capped = caller.plan.monthly_allowance is not None
    status = quota_status(caller=caller, now=now) if capped else None
    granted = wanted if status is None else min(wanted, status.remaining)
    if granted <= 0 and wanted > 0:
        raise _quota_exceeded(plan=caller.plan, now=now)
    counted = 0 if status is None else status.used
    return Reservation(
        caller=caller, month=month_start(now), wanted=wanted, granted=granted, counted=counted
    )


# Holds of the current request, confirmed when its answer has been written (None: not in a
# request served through `quota_delivery`, e.g. a management command: confirmed at once).
_undelivered: ContextVar[list[int] | None] = ContextVar("quota_undelivered", default=None)


@contextmanager
def quota_reservation(
    *, caller: Caller, wanted: int, now: datetime | None = None, spend: bool = True
) -> Iterator[Reservation]:
    """Reserve up to `wanted` records. On exit refund whatever the block did not `use()`, or
    everything if it raised (the answer is an error); what was used stays held until the
    answer is delivered. With `spend=False` (HEAD) the grant is only previewed: nothing is
    counted, held or refunded."""
    if not spend:
        yield quota_preview(caller=caller, wanted=wanted, now=now)
        return
    reservation = quota_reserve(caller=caller, wanted=wanted, now=now)
    try:
        yield reservation
    except BaseException:
        _settle(reservation, delivered=0, keep_hold=False)
        raise
    pending = _undelivered.get()
    keep = reservation.hold_id is not None and reservation.used > 0 and pending is not None
    _settle(reservation, delivered=reservation.used, keep_hold=keep)
    if keep:
        pending.append(reservation.hold_id)


def _settle(reservation: Reservation, *, delivered: int, keep_hold: bool) -> None:
    """Give back what will not be delivered and make the hold say what will, as one unit (a
    failure half-way would otherwise give records back twice, or never). Nothing to write in
    the usual case: every granted record served, the hold kept until delivery."""
    unused = reservation.granted - delivered
    if reservation.hold_id is None or (unused == 0 and keep_hold):
        return
    with transaction.atomic():
        quota_refund(reservation=reservation, count=unused)
        if keep_hold:
            QuotaHold.objects.filter(pk=reservation.hold_id).update(records=delivered)
        else:
            _forget_holds([reservation.hold_id])


def _forget_holds(hold_ids: list[int | None]) -> None:
    """Delete the holds (their records given back, or on SQLite delivered): one plain
    statement (the ORM's delete would wrap it in a transaction of its own, three round trips),
    prepared on PostgreSQL. A refund's stays in its transaction."""
    ids = [hold_id for hold_id in hold_ids if hold_id is not None]
    if ids:
        marks = ", ".join(["%s"] * len(ids))
        sql = f"DELETE FROM {QuotaHold._meta.db_table} WHERE id IN ({marks})"  # noqa: S608
        with prepared_cursor(connection) as cursor:
            cursor.execute(sql, ids)


@contextmanager
def quota_delivery() -> Iterator[Callable[[HttpResponse], None]]:
    """Around one request: the holds it makes are confirmed when the response is closed, which
    the WSGI server does after writing the body; if the request fails before its response
    exists, they stay and expire (given back). On PostgreSQL confirming queues them for the
    process's next charge, which deletes them in its own statement (or the flusher does, within
    about a second: quota/confirmations.py); elsewhere they are deleted at once."""
    reset = _undelivered.set([])
    try:

        def deliver(response: HttpResponse) -> None:
            holds = _undelivered.get()
            if holds:
                confirmed = list(holds)
                # Runs in close(), before request_finished closes the database connection.
                if connection.vendor == "postgresql":
                    response._resource_closers.append(lambda: pending_add(confirmed))
                else:
                    response._resource_closers.append(lambda: _forget_holds(confirmed))

        yield deliver
    finally:
        _undelivered.reset(reset)


def _holds(*, caller: Caller) -> QuerySet[QuotaHold]:
    column, value = _owner(caller)
    return QuotaHold.objects.filter(**{column: value})


def quota_status(*, caller: Caller, now: datetime | None = None) -> QuotaStatus:
    """The caller's plan and this month's usage (one read). Records held by answers that
    never went out (expired holds) are not counted: they are given back."""
    now = now or timezone.now()
    month = month_start(now)
    column, key = _owner(caller)
    undelivered, params = _expired_holds_sql(caller, month, now)
    sql = (
        f"SELECT used - {undelivered} FROM {MonthlyUsage._meta.db_table} "  # noqa: S608
        f"WHERE {column} = %s AND month = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, key, connection.ops.adapt_datefield_value(month)])
        row = cursor.fetchone()
    used = row[0] if row is not None else 0  # no row yet: nothing used this month
    return QuotaStatus(plan=caller.plan, used=max(0, used), resets_at=next_reset(now))
