"""Values read beside the kept copies: per-startup fields that move without a Change row.

A sync that found the same figures writes no Change row and keeps the data token (nothing
anyone sees changed but the time of the sync), so the kept copies (profile JSON, list rows)
stay. The fields such a sync moves (the sync time and what is derived from it) are therefore
never served from inside a copy: each use reads them from here and sets them into the copy.

`Beside` keeps them per startup. Each such sync is stamped (`stamp_fresh`): in its transaction
a `FreshStamp` row names the startup and the "fresh" token becomes `<epoch>.<stamp id>`. A
process that sees a newer fresh token reads the stamps since the one it applied (one small
query by primary key range, once per process per new token: `FRESH_CHECKPOINT`, the change
sequence's mechanism, core/rowcopies.py) and forgets the values of those startups only; the
others stay. (Before, every stamp started the values over: under the refresh worker's ~11
stamps a second at 100,000 startups nearly every list request read its page's sync times
again.) A visible change drops a startup's value as it drops its copies (the values are row
copies of the data checkpoint too). A value missing or forgotten is read from the primary, for
all the startups a request needs, in one query (the reader the app hands in). A copy built in
the request serves its own values and hands them in (`seed`, when read from the primary after
`position()`): no query at all then.
"""

import secrets
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connections, transaction

from core import plainsql, readcache, replica, rowcopies
from core.models import FreshStamp
from core.postgresql import prepared_cursor

# Reads {startup id: value} for the ids given from the database alias given; an id without a
# value is absent.
Reader = Callable[[list[int], str], dict[int, Any]]

# Stamps kept: far more than a process applies between two tokens (rowcopies.MAX_APPLIED_ROWS;
# past that it starts over), pruned every PRUNE_EVERY stamps.
KEEP_STAMPS = 50 * rowcopies.MAX_APPLIED_ROWS
PRUNE_EVERY = 1_000


_STAMPS_SQL = (
    f"SELECT startup_id, id FROM {plainsql.table(FreshStamp)}"  # noqa: S608 - a table name
    " WHERE id > %s AND id <= %s"
)


def _stamps(after: int, upto: int) -> list[tuple[int, int]]:
    """(startup id, stamp id) of the stamps in (after, upto]: plain SQL (core/plainsql.py),
    once per process per new fresh token."""
    return plainsql.run(_STAMPS_SQL, [after, upto], using=readcache.PRIMARY)[1]


# This process's last applied fresh token: which startups were stamped since a value was read.
FRESH_CHECKPOINT = rowcopies.Checkpoint(_stamps)
readcache.on_clear(FRESH_CHECKPOINT.reset)


_STAMP_SQL = (
    f"INSERT INTO {FreshStamp._meta.db_table} (startup_id)"  # noqa: S608
    " VALUES (CAST(%s AS bigint)) RETURNING id"
)


def stamp_fresh(startup_id: int) -> None:
    """Stamp a sync of `startup_id` that changed nothing but its time, in the current
    transaction (one of its own if none): every server forgets that startup's value only.
    The fresh token's row is locked first, so stamps take their ids in commit order. Plain
    SQL, prepared on PostgreSQL, and no savepoint: the refresh worker stamps ~11 syncs a
    second at 100,000 startups, ~111 at 1,000,000."""
    with transaction.atomic(using=readcache.PRIMARY, savepoint=False):
        epoch = readcache.epoch_for_update("fresh")
        with prepared_cursor(connections[readcache.PRIMARY]) as cursor:
            cursor.execute(_STAMP_SQL, [startup_id])
            (stamp,) = cursor.fetchone()
        readcache.bump("fresh", rowcopies.token_of(epoch, stamp, new_epoch=secrets.token_hex))
        if stamp % PRUNE_EVERY == 0:
            FreshStamp.objects.using(readcache.PRIMARY).filter(id__lte=stamp - KEEP_STAMPS).delete()


class Beside:
    """A per-process map of startup id -> value, each kept until its startup is stamped or
    visibly changed (see the module's docstring)."""

    def __init__(self, read: Reader, *, max_entries: int, missing: Any = None):
        self._read = read
        self._missing = missing  # the value of a startup the reader returns nothing for
        self._copies = readcache.row_copies(max_entries)
        self.reads = 0  # queries sent (tests and the bench notes)

    def values(self, ids: Iterable[int], *, usable: Callable[[Any], bool] = bool) -> dict:
        """{id: value} for `ids`: kept ones while current (and `usable`), the others read
        from the primary in one query."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        stamp, fresh = self.position()
        values = {}
        if fresh is not None:
            for startup_id, kept in self._copies.lookup(ids, stamp).items():
                read_at, value = kept
                if FRESH_CHECKPOINT.keeps(startup_id, read_at) and usable(value):
                    values[startup_id] = value
        missing = [startup_id for startup_id in ids if startup_id not in values]
        if missing:
            self.reads += 1
            read = self._read(missing, readcache.PRIMARY)
            for startup_id in missing:
                values[startup_id] = value = read.get(startup_id, self._missing)
                if fresh is not None:
                    self._copies.put(startup_id, (fresh, value), startup_id, stamp)
        return values

    def seed(
        self, startup_id: int, value: Any, position: "Position", *, partial: bool = False
    ) -> None:
        """Keep `value`, read with a copy of the startup after `position()` returned
        `position`, so later uses of that copy send no query for it. A `partial` value (a
        list row's) never replaces a kept one, which may hold more."""
        stamp, fresh = position
        if fresh is None or replica.configured():  # a replica may lag the stamp
            return
        if partial:
            kept = self._copies.lookup([startup_id], stamp).get(startup_id)
            if kept is not None and FRESH_CHECKPOINT.keeps(startup_id, kept[0]):
                return
        self._copies.put(startup_id, (fresh, value), startup_id, stamp)

    def position(self) -> "Position":
        """The (data stamp, fresh stamp) to keep values under: read before the rows."""
        stamp = readcache.row_stamp()
        if stamp is None:
            return (None, None)
        return (stamp, FRESH_CHECKPOINT.stamp(readcache.current("fresh")))


Position = tuple[Any, rowcopies.Stamp | None]
