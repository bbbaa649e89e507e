"""Daily snapshots of verified figures, and the 30-day growth derived from them.

Every successful sync records the day's snapshot (UTC date): the last sync of a day wins, earlier
days are never rewritten. `growth_30d` compares the latest snapshot's MRR with the most recent
snapshot at least 30 days older, and is stored on the startup so lists can sort by it.
"""

from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import NamedTuple

from django.db import router, transaction

from core import plainsql
from startups import listsql
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


# The figures a snapshot keeps (besides its day and `synced_at`).
SNAPSHOT_FIGURES = ("provider", "mrr", "arr", "customers", "last_30_days", "total_revenue")


@transaction.atomic
def revenue_snapshot_record(*, startup: Startup, now: datetime) -> RevenueSnapshot | None:
    """Record today's (UTC) snapshot from the startup's current verification figures and
    refresh its growth; None when it has no verification."""
    figures = Verification.objects.filter(startup=startup).values(*SNAPSHOT_FIGURES).first()
    if figures is None:
        return None
    if fields := day_snapshot_write(startup=startup, now=now, figures=figures):
        startup_change_record(startup=startup, fields=fields, now=now)
    else:
        nothing_visible()
    return RevenueSnapshot.objects.get(startup=startup, date=now.astimezone(UTC).date())


def day_snapshot_write(*, startup: Startup, now: datetime, figures: dict) -> list[str]:
    """Inside the caller's transaction: write today's (UTC) snapshot of `figures` (the
    startup's verification figures, SNAPSHOT_FIGURES) and store the growth it gives. Returns
    the API fields that changed (the growth's, or none): the caller records them with its
    own change, or says `nothing_visible()`."""
    day = now.astimezone(UTC).date()
    row = {name: figures[name] for name in SNAPSHOT_FIGURES} | {"synced_at": now}
    # Plain SQL (core/plainsql.py; the sync's hot path): a day's snapshot is not a change of
    # the startup, and the growth's UPDATE is the change this returns.
    values = [plainsql.to_db(RevenueSnapshot, name, value) for name, value in row.items()]
    on_day = plainsql.to_db(RevenueSnapshot, "date", day)
    written, _ = plainsql.run(_SNAPSHOT_UPDATE_SQL, [*values, startup.pk, on_day])
    if not written:
        RevenueSnapshot.objects.bulk_create([RevenueSnapshot(startup=startup, date=day, **row)])
    growth = _growth_after_writing(startup=startup, day=day)
    # One conditional UPDATE instead of reading the stored growth first: no row when it holds.
    if growth is None:
        moved, _ = plainsql.run(_GROWTH_CLEARED_SQL, [startup.pk])
    else:
        moved, _ = plainsql.run(_GROWTH_MOVED_SQL, [growth, startup.pk, growth])
    return api_fields(["growth_30d"]) if moved else []


_SNAPSHOTS, _STARTUPS = plainsql.table(RevenueSnapshot), plainsql.table(Startup)
_SNAPSHOT_UPDATE_SQL = (
    f"UPDATE {_SNAPSHOTS} SET "  # noqa: S608 - names of columns only
    + ", ".join(f"{name} = %s" for name in (*SNAPSHOT_FIGURES, "synced_at"))
    + ' WHERE startup_id = %s AND "date" = %s'
)
_GROWTH_CLEARED_SQL = (
    f"UPDATE {_STARTUPS} SET growth_30d = NULL"  # noqa: S608 - a table name
    " WHERE id = %s AND growth_30d IS NOT NULL"
)
_GROWTH_MOVED_SQL = (
    f"UPDATE {_STARTUPS} SET growth_30d = %s"  # noqa: S608 - a table name
    " WHERE id = %s AND (growth_30d IS NULL OR growth_30d <> %s)"
)
# The snapshot of a day and the latest one at least GROWTH_DAYS older.
_LATEST_AND_BASE_SQL = (
    f'SELECT "date", mrr FROM {_SNAPSHOTS}'  # noqa: S608 - a table name
    ' WHERE startup_id = %s AND ("date" >= %s OR "date" <= %s) ORDER BY "date" DESC LIMIT 2'
)


def _growth_after_writing(*, startup: Startup, day: date) -> float | None:
    """`growth_30d_of` once the snapshot of `day` is written, in one read: that snapshot and
    the latest one at least 30 days older (a later day's snapshot, from a sync dated in the
    past, makes it the general reading)."""
    earliest_base = day - timedelta(days=GROWTH_DAYS)
    on = partial(plainsql.to_db, RevenueSnapshot, "date")
    _, rows = plainsql.run(_LATEST_AND_BASE_SQL, [startup.pk, on(day), on(earliest_base)])
    latest, *base = rows
    if plainsql.from_db(RevenueSnapshot, "date", latest[0]) != day:
        return growth_30d_of(startup=startup)
    return growth_ratio(current=latest[1], earlier=base[0][1]) if base else None


class Day(NamedTuple):
    """One day of a history as the API shows it: the snapshot's columns read, in order."""

    date: date
    mrr: int | None
    arr: int | None
    customers: int
    last_30_days: int


def startup_history(
    *, slug: str, start: date | None = None, end: date | None = None, db: str | None = None
) -> tuple[str, list[Day]] | None:
    """The published startup `slug` (its slug as stored) and its days from `start` to `end`
    (inclusive, either open), oldest first; None when no published startup has that slug.
    One statement (startups/listsql.py), read from `db` (None: where the router reads
    snapshots)."""
    db = db or router.db_for_read(RevenueSnapshot)
    found = listsql.history_rows(slug, start, end, columns=Day._fields, db=db)
    if found is None:
        return None
    stored, rows = found
    return stored, [Day(*row) for row in rows]
