"""The change sequence: every visible write to a startup, one row each, in commit order.

Every write path that changes what a startup shows (a founder's edit, a sync that changed a
figure or the verification status, publish/unpublish, delete, an operator's edit, a seed or an
import) ends with `startup_change_record` (or `startups_change_record` for many startups), in
the write's own transaction. That one call:

1. replaces the read cache's data token with `<epoch>.<highest sequence written>` (the
   epoch of the token it replaces: core/rowcopies.py), so a process that applied the
   sequence below drops only the copies of the startups named by the rows in between. No
   module but this one and the read cache bumps the data token
   (tests/startups/test_changes.py checks the source), so the token and the sequence always
   move together;
2. takes a transaction-level lock (PostgreSQL: `pg_advisory_xact_lock`), then inserts the
   `Change` rows. The lock is held until the transaction ends, so sequence numbers are handed
   out in commit order: a reader that has seen sequence N never later finds a committed row
   below N (a consumer paging by sequence skips nothing). SQLite has one writer at a time.

A write that changes nothing visible calls neither (the sync compares before it writes).
docs/architecture.md says what the sequence feeds: the change feed, per-row invalidation of the
read cache, webhooks and replica consistency.
"""

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache, partial

from django.conf import settings
from django.db import connections
from django.utils import timezone

from core import plainsql, readcache, rowcopies
from core.renderers import camel_key
from startups.models import Change, MonthlyRevenue, Startup, Verification

CREATED, UPDATED = Change.Kind.CREATED, Change.Kind.UPDATED
DELETED, UNPUBLISHED = Change.Kind.DELETED, Change.Kind.UNPUBLISHED
TOMBSTONES = (DELETED, UNPUBLISHED)

# Any fixed 64-bit number: the advisory lock every Change insert takes (PostgreSQL).
SEQUENCE_LOCK = 0x6F73_6368_616E_6765  # "oschange"
DB = "default"

# The startup's columns the API shows, by their API names (what `Change.fields` lists): the
# REST renderer's own camelCase (`camel_key`), the headline figures under `revenue.`.
_TOP_LEVEL = ("name", "slug", "icon", "description", "website", "category", "categories")
_TOP_LEVEL += ("industry", "business_type", "founded", "country", "team_size", "technologies")
_TOP_LEVEL += ("founder_name", "on_sale", "asking_price", "owner", "is_published")
VISIBLE_COLUMNS = {
    **{column: camel_key(column) for column in _TOP_LEVEL},
    **{
        column: f"revenue.{camel_key(column)}"
        for column in ("mrr", "arr", "currency", "growth_30d")
    },
    "ai_addon_active": "aiAddon",
    "ai_addon_expires_at": "aiAddon",
}

# Every service that writes what a startup shows, by dotted name. Each goes through
# `startup_change_record` / `startups_change_record`; tests/startups/test_changes.py drives
# every one and fails when one writes without a Change row (or when one is added here
# without a test).
WRITE_PATHS = (
    "founders.services.startup_create",
    "founders.services.startup_update",
    "founders.services.claims_approve",
    "founders.services.startup_disconnect",
    "founders.reviews.pending_changes_approve",
    "founders.reviews.pending_changes_reject",
    "verification.services.revenue_sync",
    "verification.connections.provider_connection_disconnect",
    "startups.history.revenue_snapshot_record",
    "web.admin.StartupAdmin.save_model",
    "web.admin.StartupAdmin.save_related",
    "web.admin.StartupAdmin.delete_model",
    "web.admin.StartupAdmin.delete_queryset",
    "startups.imports.startups_import",
    "demo.seed.seed_demo",
)


@dataclass(frozen=True)
class Changed:
    """One visible write to one startup, before it is recorded."""

    startup_id: int
    slug: str
    kind: str
    fields: tuple[str, ...] = ()


def api_fields(columns: Iterable[str]) -> list[str]:
    """The API names of the startup's visible columns among `columns`, sorted, no repeats."""
    return sorted({VISIBLE_COLUMNS[name] for name in columns if name in VISIBLE_COLUMNS})


def change_of(startup: Startup, *, kind: str = UPDATED, fields: Iterable[str] = ()) -> Changed:
    """The change to record for `startup` as it is now: an unpublished startup's edit is a
    tombstone (`unpublished`), so no consumer keeps or learns it."""
    if kind != DELETED and not startup.is_published:
        kind = UNPUBLISHED
    return Changed(startup.pk, startup.slug, kind, tuple(sorted(set(fields))))


def startup_change_record(
    *,
    startup: Startup,
    kind: str = UPDATED,
    fields: Iterable[str] = (),
    now: datetime | None = None,
) -> None:
    """Record one visible write to `startup` (call it inside the write's transaction)."""
    startups_change_record([change_of(startup, kind=kind, fields=fields)], now=now)


def startups_change_record(changes: Iterable[Changed], *, now: datetime | None = None) -> int:
    """Record visible writes (inside the writes' transaction): the data token is replaced and
    the Change rows inserted in commit order. Returns how many rows were written."""
    at = now or timezone.now()
    rows = [
        Change(startup_id=c.startup_id, slug=c.slug, kind=c.kind, fields=list(c.fields), at=at)
        for c in changes
    ]
    if not rows:
        return 0
    connection = connections[DB]
    if not connection.in_atomic_block:
        raise RuntimeError("record a change inside the transaction of the write it describes")
    # The token's row first (the order every write takes: a receiver's `bump` may hold it),
    # then the sequence's lock; the new token names the highest sequence written here.
    epoch = readcache.epoch_for_update("data")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SEQUENCE_LOCK])
    Change.objects.using(DB).bulk_create(rows, batch_size=2000)
    highest = max((row.pk for row in rows if row.pk is not None), default=None)
    if highest is None:  # a backend that does not return the ids: ours are the last ones
        highest = Change.objects.using(DB).order_by("-id").values_list("id", flat=True)[0]
    readcache.bump("data", rowcopies.token_of(epoch, highest, new_epoch=secrets.token_hex))
    return len(rows)


def nothing_visible() -> None:
    """Say, inside a write's transaction, that its queryset writes so far change nothing any
    surface shows (a sync that found the same figures, a day's snapshot): the data token
    stays, and core/invalidation.py does not take them for writes that forgot their change."""
    readcache.settled("data")


def slugs_present(slugs: list[str]) -> dict[str, int]:
    """The ids of the startups among `slugs` that exist now (before a bulk load replaces them)."""
    found: dict[str, int] = {}
    for start in range(0, len(slugs), 5000):
        chunk = slugs[start : start + 5000]
        found.update(Startup.objects.using(DB).filter(slug__in=chunk).values_list("slug", "id"))
    return found


def loaded_changes(startups: list[dict], *, replaced: dict[str, int]) -> list[Changed]:
    """The changes of a bulk load (seed) that deleted the startups `replaced` (slug: old id) and
    inserted `startups` (rows by column): a tombstone per old row, then each new one."""
    ids = slugs_present([row["slug"] for row in startups])
    changes = [Changed(pk, slug, DELETED) for slug, pk in replaced.items()]
    for row in startups:
        kind = CREATED if row.get("is_published", True) else UNPUBLISHED
        changes.append(Changed(ids[row["slug"]], row["slug"], kind))
    return changes


# The verified figures a sync writes, by their API names in the detail's `verification`.
VERIFIED_FIGURES = {
    "mrr": "verification.mrr",
    "arr": "verification.arr",
    "total_revenue": "verification.totalRevenue",
    "last_30_days": "verification.last30Days",
    "customers": "verification.customers",
}
# What the figures are shown with: a new methodology, key scope or provider figure is a change.
DESCRIBED = {
    "methodology_version": "verification.methodologyVersion",
    "credential": "verification.credential",
    "provider_reported": "verification.providerReported",
}
REFUSED_STATUSES = ("key_revoked", "error")


def _stored_figures(startup_id: int, names: list[str]) -> tuple[dict, dict | None, list[tuple]]:
    """(the startup's headline {mrr, arr, currency}, its stored verification's `names` or
    None, its monthly (month, gross, refunds) rows oldest first) in one read: the sync's hot
    path (most syncs end here), plain SQL (core/plainsql.py)."""
    _, rows = plainsql.run(_stored_figures_sql(tuple(names)), [startup_id])
    if not rows:
        raise Startup.DoesNotExist(f"no startup {startup_id}")
    first = rows[0]
    headline = dict(zip(("mrr", "arr", "currency"), first[:3], strict=True))
    if first[3] is None:
        return headline, None, []
    verification = {
        name: plainsql.from_db(Verification, name, value)
        for name, value in zip(names, first[4 : 4 + len(names)], strict=True)
    }
    month = partial(plainsql.from_db, MonthlyRevenue, "month")
    stored = [(month(row[-3]), row[-2], row[-1]) for row in rows if row[-3] is not None]
    return headline, verification, stored


@cache
def _stored_figures_sql(names: tuple[str, ...]) -> str:
    columns = ", ".join(f"v.{Verification._meta.get_field(name).column}" for name in names)
    return (
        f"SELECT s.mrr, s.arr, s.currency, v.id, {columns}, m.month, m.gross, m.refunds"  # noqa: S608
        f" FROM {plainsql.table(Startup)} s"
        f" LEFT JOIN {plainsql.table(Verification)} v ON v.startup_id = s.id"
        f" LEFT JOIN {plainsql.table(MonthlyRevenue)} m ON m.verification_id = v.id"
        " WHERE s.id = %s ORDER BY m.month"
    )  # names of columns only; the id is a parameter


def verified_figures_changes(
    *,
    startup_id: int,
    provider: str,
    figures: dict,
    monthly: list[tuple],
    previous_status: str,
    now: datetime,
    described: dict | None = None,
) -> list[str]:
    """What storing a sync's figures would change that anyone can see, by API name ([]: the
    sync changes nothing visible and writes no figures). `figures` holds VERIFIED_FIGURES'
    keys, `monthly` (month, gross, refunds) rows oldest first, `previous_status` the
    connection's status before this sync; `described` the other stored fields the figures are
    shown with (`methodology_version`, `credential`, `provider_reported`), by column name."""
    stored_names = [*VERIFIED_FIGURES, "provider", "level", "currency", "verified_at"]
    stored_names += list(described or {})
    headline, verification, stored = _stored_figures(startup_id, stored_names)
    wanted = {"mrr": figures["mrr"], "arr": figures["arr"], "currency": "USD"}
    changed = [VISIBLE_COLUMNS[name] for name, value in wanted.items() if headline[name] != value]
    if verification is None:
        return sorted({*changed, "revenue.verified", "verification"})
    changed += [
        api for name, api in VERIFIED_FIGURES.items() if verification[name] != figures[name]
    ]
    if (verification["provider"], verification["level"], verification["currency"]) != (
        provider,
        "verified",
        "USD",
    ):
        changed.append("verification.provider")
    changed += [
        DESCRIBED[name] for name, value in (described or {}).items() if verification[name] != value
    ]
    if stored != monthly:
        changed.append("verification.monthly")
    stale_after = timedelta(hours=settings.VERIFICATION_STALE_HOURS)
    if previous_status in REFUSED_STATUSES or now - verification["verified_at"] > stale_after:
        changed.append("verification.status")
    return sorted(set(changed))
