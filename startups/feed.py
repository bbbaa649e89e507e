"""The change feed (GET /api/v1/changes): the change sequence read oldest first, from a cursor.

Semantics (README "Change feed"): entries come in the order of the change sequence
(startups/changes.py), which is also commit order, so resuming after the last sequence seen
never skips a change; delivery is at least once (one write may show as more than one entry, and
a consumer that resumes from an older cursor sees entries again). Each `created`/`updated` entry
carries the startup's list item as it is when the page is read (null when the startup is no
longer published under that slug: a tombstone for it follows); `deleted` and `unpublished`
entries are tombstones. Entries older than CHANGE_RETENTION_DAYS are pruned by the refresh
worker (`changes_prune`); a cursor from before what was pruned is refused as
`410 cursor_expired`, so a consumer resyncs from the start instead of silently missing
tombstones.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.utils import timezone

from core.cursors import cursor_open, cursor_seal
from startups.changes import TOMBSTONES
from startups.models import Change, Startup
from startups.selectors import list_rows


def feed_cursor(after: int) -> str:
    """The cursor to resume after sequence `after`."""
    return cursor_seal("changes", orjson.dumps([after]))


def feed_position(cursor: str) -> int | None:
    """The sequence a feed cursor resumes after; None when this server did not issue it."""
    raw = cursor_open("changes", cursor)
    if raw is None:
        return None
    try:
        (after,) = orjson.loads(raw)
    except (orjson.JSONDecodeError, ValueError, TypeError):
        return None
    return after if isinstance(after, int) and 0 <= after < 2**63 else None


def _cutoff(now: datetime | None) -> datetime:
    return (now or timezone.now()) - timedelta(days=settings.CHANGE_RETENTION_DAYS)


def position_expired(after: int, *, now: datetime | None = None) -> bool:
    """Whether changes right after `after` may have been pruned: pruning keeps the newest
    pruned-age row as a marker, so the oldest row is past retention exactly when pruning has
    run, and a cursor before it (but for a gap) may have lost entries."""
    oldest = Change.objects.order_by("id").values("id", "at").first()
    return oldest is not None and after < oldest["id"] - 1 and oldest["at"] < _cutoff(now)


@dataclass(frozen=True)
class FeedEntry:
    change: Change
    startup: Startup | None  # the list item's row now; None for tombstones and gone startups


@dataclass(frozen=True)
class FeedPage:
    entries: list[FeedEntry]
    has_more: bool
    last: int  # the sequence to resume after


def change_feed(*, after: int, limit: int) -> FeedPage:
    """Up to `limit` changes after sequence `after`, oldest first, each with its startup's
    current list row when it is still published under the entry's slug."""
    changes = list(Change.objects.filter(id__gt=after).order_by("id")[: limit + 1])
    has_more = len(changes) > limit
    changes = changes[:limit]
    live = [c.startup_id for c in changes if c.kind not in TOMBSTONES]
    rows = list_rows(live) if live else {}
    entries = []
    for change in changes:
        row = None if change.kind in TOMBSTONES else rows.get(change.startup_id)
        if row is not None and row.slug != change.slug:
            row = None  # renamed since: the old slug's tombstone follows
        entries.append(FeedEntry(change=change, startup=row))
    return FeedPage(entries=entries, has_more=has_more, last=changes[-1].id if changes else after)


def changes_prune(*, now: datetime | None = None) -> int:
    """Delete changes older than CHANGE_RETENTION_DAYS (run by the refresh worker), keeping
    the newest of them as the marker `position_expired` reads. Returns how many were deleted."""
    old = Change.objects.filter(at__lt=_cutoff(now))
    marker = old.order_by("-id").values_list("id", flat=True).first()
    if marker is None:
        return 0
    deleted, _ = old.filter(id__lt=marker).delete()
    return deleted
