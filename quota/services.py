"""The monthly allowance: records served per account (or per client address) per UTC month.

Counters live in the database (`MonthlyUsage`). Every change is one conditional UPDATE, so two
processes (or two servers) never hand out more than the allowance and never lose a count:

    UPDATE quota_monthlyusage SET used = used + :n WHERE <row> AND used <= :allowance - :n

When fewer than `n` records remain the UPDATE matches nothing; we then read what is left and
retry with that smaller `n`. Unused records are given back with `used = used - :unused`.
"""

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from django.db.models import F, QuerySet
from django.utils import timezone

from openstartup.errors import QuotaExceeded
from openstartup.formats import iso_timestamp, month_start
from quota.models import MonthlyUsage
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

    def use(self, count: int) -> None:
        if count > self.granted:
            raise ValueError(f"Used {count} records but only {self.granted} were granted.")
        self.used = count


def next_reset(now: datetime) -> datetime:
    """The 1st of the next UTC month, 00:00 UTC: when the allowance resets."""
    utc = now.astimezone(UTC)
    year, month = (utc.year + 1, 1) if utc.month == 12 else (utc.year, utc.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def _rows(*, caller: Caller, month: date) -> QuerySet[MonthlyUsage]:
    if caller.account_id is not None:
        return MonthlyUsage.objects.filter(account_id=caller.account_id, month=month)
    return MonthlyUsage.objects.filter(client=caller.client, month=month)


def _quota_exceeded(*, plan: PlanLimits, now: datetime) -> QuotaExceeded:
    reset = next_reset(now)
    return QuotaExceeded(
        f"The {plan.name} plan includes {plan.monthly_allowance} records per calendar month "
        f"(UTC) and this month's are used up. The allowance resets on {iso_timestamp(reset)} "
        "(the 1st of next month, 00:00 UTC); a Pro key has no monthly cap.",
        headers={"Retry-After": str(max(1, math.ceil((reset - now).total_seconds())))},
    )


def quota_reserve(*, caller: Caller, wanted: int, now: datetime | None = None) -> Reservation:
    """Grant min(wanted, records left this month); raise QuotaExceeded when none are left.
    An uncapped plan gets everything and touches no counter."""
    now = now or timezone.now()
    month = month_start(now)
    allowance = caller.plan.monthly_allowance
    if allowance is None:
        # Records served on an uncapped plan are not counted: a Pro account that lapses
        # mid-month starts Free with only the records it spent on Free before.
        return Reservation(caller=caller, month=month, wanted=wanted, granted=wanted)
    want = wanted
    while want > 0:
        rows = _rows(caller=caller, month=month).filter(used__lte=allowance - want)
        if rows.update(used=F("used") + want):
            return Reservation(caller=caller, month=month, wanted=wanted, granted=want)
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
    raise _quota_exceeded(plan=caller.plan, now=now)


def quota_refund(*, reservation: Reservation, count: int) -> None:
    """Give back `count` granted but unserved records to the reservation's month."""
    if count > 0 and reservation.caller.plan.monthly_allowance is not None:
        _rows(caller=reservation.caller, month=reservation.month).update(used=F("used") - count)


def quota_preview(*, caller: Caller, wanted: int, now: datetime | None = None) -> Reservation:
    """What `quota_reserve` would grant, spending nothing (HEAD requests deliver no records);
    raises QuotaExceeded as it would when none are left."""
    now = now or timezone.now()
    capped = caller.plan.monthly_allowance is not None
    status = quota_status(caller=caller, now=now) if capped else None
    granted = wanted if status is None else min(wanted, status.remaining)
    if granted <= 0 and wanted > 0:
        raise _quota_exceeded(plan=caller.plan, now=now)
    return Reservation(caller=caller, month=month_start(now), wanted=wanted, granted=granted)


@contextmanager
def quota_reservation(
    *, caller: Caller, wanted: int, now: datetime | None = None, spend: bool = True
) -> Iterator[Reservation]:
    """Reserve up to `wanted` records; on exit refund whatever the block did not `use()`.
    With `spend=False` (HEAD) the grant is only previewed: nothing is counted or refunded."""
    if not spend:
        yield quota_preview(caller=caller, wanted=wanted, now=now)
        return
    reservation = quota_reserve(caller=caller, wanted=wanted, now=now)
    try:
        yield reservation
    finally:
        quota_refund(reservation=reservation, count=reservation.granted - reservation.used)


def quota_status(*, caller: Caller, now: datetime | None = None) -> QuotaStatus:
    """The caller's plan and this month's usage (one read)."""
    now = now or timezone.now()
    used = _rows(caller=caller, month=month_start(now)).values_list("used", flat=True).first()
    return QuotaStatus(plan=caller.plan, used=used or 0, resets_at=next_reset(now))
