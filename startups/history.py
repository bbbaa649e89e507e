"""Daily snapshots of verified figures, and the 30-day growth derived from them.

Every successful sync records the day's snapshot (UTC date): the last sync of a day wins, earlier
days are never rewritten. `growth_30d` compares the latest snapshot's MRR with the most recent
snapshot at least 30 days older, and is stored on the startup so lists can sort by it.
"""

from datetime import UTC, date, datetime, timedelta

from django.db import transaction
from django.db.models import QuerySet

from startups.changes import api_fields, nothing_visible, startup_change_record
from startups.models import RevenueSnapshot, Startup, Verification

GROWTH_DAYS = 30


def growth_ratio(*, current: int | None, earlier: int | None) -> float | None:
    """MRR change as a ratio (0.12 = +12%); None when either side is unknown or earlier is 0."""
    if current is None or not earlier:
        return None
    return round((current - earlier) / earlier, 4)


def growth_30d_of(*, startup: Startup) -> float | None:
    """The ratio between the latest snapshot and the latest one at least 30 days older."""
    latest = RevenueSnapshot.objects.filter(startup=startup).order_by("-date").first()
    if latest is None:
        return None
    base = (
        RevenueSnapshot.objects.filter(
            startup=startup, date__lte=latest.date - timedelta(days=GROWTH_DAYS)
        )
        .order_by("-date")
        .first()
    )
    return None if base is None else growth_ratio(current=latest.mrr, earlier=base.mrr)


@transaction.atomic
def revenue_snapshot_record(*, startup: Startup, now: datetime) -> RevenueSnapshot | None:
    """Record today's (UTC) snapshot from the startup's current verification figures and
    refresh its growth; None when it has no verification."""
    verification = Verification.objects.filter(startup=startup).first()
    if verification is None:
        return None
    day = now.astimezone(UTC).date()
    figures = {
        "provider": verification.provider,
        "mrr": verification.mrr,
        "arr": verification.arr,
        "customers": verification.customers,
        "last_30_days": verification.last_30_days,
        "total_revenue": verification.total_revenue,
        "synced_at": now,
    }
    # Queryset writes (no model signals): a day's snapshot is not a change of the startup.
    if not RevenueSnapshot.objects.filter(startup=startup, date=day).update(**figures):
        RevenueSnapshot.objects.bulk_create([RevenueSnapshot(startup=startup, date=day, **figures)])
    growth = growth_30d_of(startup=startup)
    stored = Startup.objects.filter(pk=startup.pk).values_list("growth_30d", flat=True).first()
    if stored != growth:
        Startup.objects.filter(pk=startup.pk).update(growth_30d=growth)
        startup_change_record(startup=startup, fields=api_fields(["growth_30d"]), now=now)
    else:
        nothing_visible()
    return RevenueSnapshot.objects.get(startup=startup, date=day)


def revenue_history(
    *, startup: Startup, start: date | None = None, end: date | None = None
) -> QuerySet[RevenueSnapshot]:
    """The startup's snapshots from `start` to `end` (inclusive, either open), oldest first."""
    snapshots = RevenueSnapshot.objects.filter(startup=startup).order_by("date")
    if start is not None:
        snapshots = snapshots.filter(date__gte=start)
    if end is not None:
        snapshots = snapshots.filter(date__lte=end)
    return snapshots
