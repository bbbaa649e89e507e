"""Values read beside the kept copies: per-startup fields that move without a Change row.

A sync that found the same figures writes no Change row and keeps the data token (nothing
anyone sees changed but the time of the sync), so the kept copies (profile JSON, list rows)
stay. The fields such a sync moves (the sync time and what is derived from it) are therefore
never served from inside a copy: each use reads them from here and sets them into the copy.

`Beside` keeps them per startup under the "fresh" token, which each such sync replaces
(`readcache.bump("fresh")`), on the row copies' mechanism (core/rowcopies.py), so a visible
change drops them as it drops the copies. While no sync was stamped since they were read, a
request reads nothing; after one, a request reads the values of the startups it needs,
missing here, from the primary in one query (the reader the app hands in). A copy built in
the request serves its own values and hands them in (`seed`, when read from the primary after
`position()`): no query at all then.
"""

from collections.abc import Callable, Iterable
from typing import Any

from core import readcache, replica

# Reads {startup id: value} for the ids given from the database alias given; an id without a
# value is absent.
Reader = Callable[[list[int], str], dict[int, Any]]


class Beside:
    """A per-process map of startup id -> value, current while the "fresh" token is."""

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
        stamp, token = self.position()
        keys = {startup_id: (token, startup_id) for startup_id in ids}
        found = self._copies.lookup(keys.values(), stamp) if token is not None else {}
        values = {i: found[keys[i]] for i in ids if keys[i] in found and usable(found[keys[i]])}
        missing = [startup_id for startup_id in ids if startup_id not in values]
        if missing:
            self.reads += 1
            read = self._read(missing, readcache.PRIMARY)
            for startup_id in missing:
                values[startup_id] = value = read.get(startup_id, self._missing)
                if token is not None:
                    self._copies.put(keys[startup_id], value, startup_id, stamp)
        return values

    def seed(
        self, startup_id: int, value: Any, position: "Position", *, partial: bool = False
    ) -> None:
        """Keep `value`, read with a copy of the startup after `position()` returned
        `position`, so later uses of that copy send no query for it. A `partial` value (a
        list row's) never replaces a kept one, which may hold more."""
        stamp, token = position
        if token is None or replica.configured():  # a replica may lag the stamp
            return
        key = (token, startup_id)
        if not (partial and self._copies.lookup([key], stamp)):
            self._copies.put(key, value, startup_id, stamp)

    def position(self) -> "Position":
        """The (data stamp, fresh token) to keep values under: read before the rows."""
        stamp = readcache.row_stamp()
        return (None, None) if stamp is None else (stamp, readcache.current("fresh"))


Position = tuple[Any, str | None]
