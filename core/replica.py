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
"""

import logging
import threading
import time

from django.conf import settings
from django.db import DatabaseError, connections

from core import dbdeadline

PRIMARY = "default"
REPLICA = "replica"
logger = logging.getLogger("openstartup.replica")


class ReplicaBreaker:
    def __init__(self) -> None:
        self._open_until = 0.0
        self._lock = threading.Lock()
        # (primary WAL position not yet replayed, when it was first seen): the lag clock.
        self._pending: tuple[int, float] | None = None

    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self, why: str) -> None:
        with self._lock:
            if not self.is_open():
                logger.warning("read replica skipped for %ss: %s", _breaker_seconds(), why)
            self._open_until = time.monotonic() + _breaker_seconds()
            self._pending = None

    def reset(self) -> None:
        with self._lock:
            self._open_until = 0.0
            self._pending = None

    def observe(self, primary_lsn: int, replayed_lsn: int) -> bool:
        """Record one check; True when the replica has replayed `primary_lsn`. Trips the
        breaker when a position seen more than REPLICA_MAX_LAG_SECONDS ago is still pending."""
        now = time.monotonic()
        with self._lock:
            if replayed_lsn >= primary_lsn:
                if self._pending is not None and replayed_lsn >= self._pending[0]:
                    self._pending = None
                return True
            if self._pending is None or replayed_lsn >= self._pending[0]:
                self._pending = (primary_lsn, now)
            lagging = now - self._pending[1] > settings.REPLICA_MAX_LAG_SECONDS
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
