"""Whether this request may read the dataset from the read replica: only a replica that is up,
answers in time and has replayed everything the primary had written when the request began.

Decided once per web request, on its first dataset read (`read_alias()`):

1. Skip the replica while its breaker is open (it failed or lagged recently).
2. Read the primary's current WAL position (`pg_current_wal_lsn()`, one cheap round trip) and
   the replica's replay position (`pg_last_wal_replay_lsn()`), the replica's query bounded by
   REPLICA_CHECK_SECONDS (core/dbdeadline.bounded: a frozen or silent replica is cut).
3. The replica serves the request only when it has replayed up to that position: every write
   the primary had committed (an unpublished startup, a deleted one, a new one) is then on the
   replica too, so every surface answers from one consistent state. Otherwise the request reads
   the primary.

The breaker opens for REPLICA_BREAKER_SECONDS when the replica is down, slow (the check failed
or missed its bound) or lagging: a position the primary had reached more than
REPLICA_MAX_LAG_SECONDS ago is still not replayed (measured from the replica's replay
position, per process). While open, requests read the primary without asking the replica;
then one request checks again. Outside web requests (management commands, the refresh worker)
everything reads the primary. State is per process.

The read cache (core/readcache.py) asks another question: may a copy filed under the
data token `<epoch>.<sequence>` be filled from the replica? `fill_alias(token)` says yes when
the replica's own highest change sequence (`startups_change`, whose ids are handed out in
commit order, each in the transaction of the write it records) has reached the token's: the
replica has then replayed that write and every earlier one, so the copy is never older than
its token. One bounded query on the replica per request and token, none on the primary. A
token that carries no sequence (a write the change sequence does not itemise) falls back to
the replay-position rule above. The same breaker and lag rule apply: a replica that fails
the check trips the breaker, one that stays behind a token's sequence for more than
REPLICA_MAX_LAG_SECONDS trips it too.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import DatabaseError, connections

from core import dbdeadline, rowcopies

PRIMARY = "default"
REPLICA = "replica"
logger = logging.getLogger("openstartup.replica")


class ReplicaBreaker:
    def __init__(self) -> None:
        self._open_until = 0.0
        self._lock = threading.Lock()
        # Per measure ("wal": WAL positions, "sequence": change sequence numbers), the position
        # not yet replayed and when it was first seen: the lag clock.
        self._pending: dict[str, tuple[int, float]] = {}

    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self, why: str) -> None:
        with self._lock:
            if not self.is_open():
                logger.warning("read replica skipped for %ss: %s", _breaker_seconds(), why)
            self._open_until = time.monotonic() + _breaker_seconds()
            self._pending = {}

    def reset(self) -> None:
        with self._lock:
            self._open_until = 0.0
            self._pending = {}

    def observe(self, primary_lsn: int, replayed_lsn: int, measure: str = "wal") -> bool:
        """Record one check; True when the replica has replayed `primary_lsn`. Trips the
        breaker when a position seen more than REPLICA_MAX_LAG_SECONDS ago is still pending."""
        now = time.monotonic()
        with self._lock:
            pending = self._pending.get(measure)
            if replayed_lsn >= primary_lsn:
                if pending is not None and replayed_lsn >= pending[0]:
                    del self._pending[measure]
                return True
            if pending is None or replayed_lsn >= pending[0]:
                pending = self._pending[measure] = (primary_lsn, now)
            lagging = now - pending[1] > settings.REPLICA_MAX_LAG_SECONDS
        if lagging:
            self.trip("replay lags more than REPLICA_MAX_LAG_SECONDS")
        return False


breaker = ReplicaBreaker()


def _breaker_seconds() -> float:
    return settings.REPLICA_BREAKER_SECONDS


def configured() -> bool:
    return REPLICA in settings.DATABASES


_PRIMARY_LSN = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
_REPLAYED_LSN = "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint"


def _scalar(alias: str, sql: str):
    with connections[alias].cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def replica_position() -> int | None:
    """The replica's replay position, within REPLICA_CHECK_SECONDS (None: not a standby).
    Raises DatabaseError when the replica is down or does not answer in time."""
    with dbdeadline.bounded(settings.REPLICA_CHECK_SECONDS):
        return _scalar(REPLICA, _REPLAYED_LSN)


def _decide() -> str:
    if breaker.is_open() or connections[PRIMARY].vendor != "postgresql":
        return PRIMARY
    primary_lsn = _scalar(PRIMARY, _PRIMARY_LSN)  # the primary's own deadline applies
    try:
        replayed = replica_position()
    except DatabaseError as error:
        breaker.trip(f"{type(error).__name__}: {error}".strip())
        _discard(REPLICA)
        return PRIMARY
    if replayed is None:  # not a standby (a misconfiguration): never trust it
        breaker.trip("DATABASE_REPLICA_URL is not a standby")
        return PRIMARY
    return REPLICA if breaker.observe(primary_lsn, replayed) else PRIMARY


def _discard(alias: str) -> None:
    """Drop a connection that failed (its socket may have been cut): the next check reconnects."""
    wrapper = connections[alias]
    try:
        wrapper.close()
    except Exception:  # already broken: nothing more to release
        wrapper.connection = None


def read_alias() -> str:
    """The alias this request reads the dataset from (decided on its first dataset read)."""
    watch = dbdeadline.current()
    if watch is None or not configured():
        return PRIMARY
    if watch.read_alias is None:
        watch.read_alias = PRIMARY  # while deciding (the check's own queries)
        watch.read_alias = _decide()
    return watch.read_alias


# Whether the replica is a standby, and the highest change sequence it has replayed.
_REPLAYED_SEQUENCE = "SELECT pg_is_in_recovery(), coalesce(max(id), 0)::bigint FROM startups_change"
_fill = threading.local()  # (the request's watch, token, alias): decided once per token


def fill_alias(token: str | None) -> str:
    """The alias to fill a read-cache copy filed under the data `token` from: the replica
    when it has replayed the write that produced `token` (its change sequence has reached
    the token's), is up and answers within REPLICA_CHECK_SECONDS, and its breaker is
    closed; otherwise the primary. Outside web requests, without a replica or a token: the
    primary."""
    watch = dbdeadline.current()
    if watch is None or token is None or not configured():
        return PRIMARY
    decided = getattr(_fill, "decided", None)
    if decided is not None and decided[0] is watch and decided[1] == token:
        return decided[2]
    alias = _fill_decision(token)
    _fill.decided = (watch, token, alias)
    return alias


def _fill_decision(token: str) -> str:
    if breaker.is_open() or connections[PRIMARY].vendor != "postgresql":
        return PRIMARY
    sequence = rowcopies.parse(token)[1]
    if sequence is None:  # no sequence: the replay position against the primary's, read now
        return _decide()  # (after the token: a position past the write that produced it)
    try:
        with dbdeadline.bounded(settings.REPLICA_CHECK_SECONDS):
            with connections[REPLICA].cursor() as cursor:
                cursor.execute(_REPLAYED_SEQUENCE)
                standby, replayed = cursor.fetchone()
    except DatabaseError as error:
        breaker.trip(f"{type(error).__name__}: {error}".strip())
        _discard(REPLICA)
        return PRIMARY
    if not standby:  # not a standby (a misconfiguration): never trust it
        breaker.trip("DATABASE_REPLICA_URL is not a standby")
        return PRIMARY
    return REPLICA if breaker.observe(sequence, replayed, "sequence") else PRIMARY
