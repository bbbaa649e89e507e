"""How current a verified figure is: the one rule every surface shows.

`status` is `key_revoked` or `error` when the provider's last answer says so (the last good
figures are kept, never zeroed); otherwise `ok` while the last successful sync is younger than
VERIFICATION_STALE_HOURS, `stale` after. `last_synced_at` is the last successful sync.

A sync that found the same figures only stamps its time (`verification_stamp`): no Change row,
the kept copies stay, and these fields are read beside them (`FRESHNESS`, core/beside.py)
rather than from inside them, so the new time shows on every server at once.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connections
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from core import plainsql
from core.beside import Beside, stamp_fresh
from core.formats import iso_timestamp, site_url
from core.postgresql import prepared_cursor
from startups.changes import nothing_visible
from startups.models import Startup, Verification
from startups.profilerow import Profile

OK, STALE, KEY_REVOKED, ERROR = "ok", "stale", "key_revoked", "error"
STATUSES = [OK, STALE, KEY_REVOKED, ERROR]
# The methodology every sync computes with now, and every version ever published (each stays
# served at /docs/methodology/<version>: stored figures name the one they were computed with).
METHODOLOGY_VERSION = "v2"
METHODOLOGY_VERSIONS = ("v1", "v2")


def last_synced_at(verification: Verification | None) -> datetime | None:
    """When the figures were last fetched successfully (each sync stamps `verified_at`)."""
    return None if verification is None else verification.verified_at


def verification_status(startup: Startup, *, now: datetime | None = None) -> str | None:
    """ok, stale, key_revoked or error; None for a startup without verified figures."""
    verification = getattr(startup, "verification", None)
    if verification is None:
        return None
    connection = getattr(startup, "provider_connection", None)
    return status_of(verification.verified_at, connection and connection.status, now=now)


def status_of(verified_at: datetime, connection_status: str | None, *, now=None) -> str:
    """The rule above from its two inputs (list rows read them as plain columns)."""
    if connection_status in (KEY_REVOKED, ERROR):
        return connection_status
    now = now or timezone.now()
    fresh_for = timedelta(hours=settings.VERIFICATION_STALE_HOURS)
    return OK if now - verified_at <= fresh_for else STALE


def methodology_url(request: HttpRequest | None, version: str = METHODOLOGY_VERSION) -> str:
    """Absolute address of the published methodology `version` (the current one by default)."""
    return site_url(request) + reverse("methodology", kwargs={"version": version})


# (verified_at, the provider connection's status) of a startup; (None, None) unverified. A list
# row knows only the first: it hands NOT_READ for the second.
Freshness = tuple[datetime | None, str | None]
NOT_READ = "not-read"


def sync_times(ids: list[int], db: str) -> dict[int, Freshness]:
    """The freshness of the verified startups among `ids`, in one query (plain SQL: the ORM's
    compile took more than half of its 1.5 ms for a page of 50 on PostgreSQL)."""
    connection = connections[db]
    verifications = plainsql.table(Verification, db)
    linked = plainsql.table(Startup._meta.get_field("provider_connection").related_model, db)
    if connection.vendor == "postgresql":  # one statement for any number of ids: prepared
        where, params = "= ANY(%s)", [list(ids)]
    else:
        where, params = f"IN ({', '.join(['%s'] * len(ids))})", list(ids)
    sql = (
        f"SELECT v.startup_id, v.verified_at, c.status FROM {verifications} v"  # noqa: S608
        f" LEFT JOIN {linked} c ON c.startup_id = v.startup_id WHERE v.startup_id {where}"
    )  # the ids are parameters; only names are formatted in
    with prepared_cursor(connection) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return {startup_id: (plainsql.aware(at), status) for startup_id, at, status in rows}


FRESHNESS = Beside(sync_times, max_entries=20_000, missing=(None, None))


def freshness_of(profile: Profile) -> Freshness:
    """What a copy built from a startup's profile rows (startups/profilerow.py) shows."""
    verification, connection = profile["verification"], profile["connection"]
    if verification is None:
        return None, None
    return verification["verified_at"], connection and connection["status"]


def shown(freshness: Freshness, *, now: datetime | None = None) -> tuple[str | None, str | None]:
    """(last_synced_at as ISO text, verification status) as every surface shows them."""
    at, connection_status = freshness
    if at is None:
        return None, None
    return iso_timestamp(at), status_of(at, connection_status, now=now)


def verification_stamp(*, startup: Startup, at: datetime) -> None:
    """A sync that found the same figures: only its time is stamped. Nothing anyone sees
    changed but the freshness fields, so no Change row and the data token stays (the kept
    copies with it); the sync is stamped (a new fresh token naming this startup), so every
    server reads this startup's new time beside them (core/beside.py)."""
    verified_at_write(startup_id=startup.pk, at=at)
    nothing_visible()
    stamp_fresh(startup.pk)


_VERIFIED_AT_SQL = (
    f"UPDATE {plainsql.table(Verification)} SET verified_at = %s"  # noqa: S608 - a table name
    " WHERE startup_id = %s"
)


def verified_at_write(*, startup_id: int, at: datetime) -> None:
    """Stamp the time of a sync on the startup's verified figures: plain SQL (the sync's hot
    path, core/plainsql.py). The caller records the change, or says nothing visible moved."""
    plainsql.run(_VERIFIED_AT_SQL, [plainsql.to_db(Verification, "verified_at", at), startup_id])
