"""The generation tokens kept in memory, current through PostgreSQL's LISTEN/NOTIFY.

Reading the tokens (core/readcache.py) is the only statement a cached anonymous answer
sends: about 0.15 ms of the 0.5 ms `/api/ai/discovery` takes in-process. A process that watches
keeps them instead: one thread holds its own connection, `LISTEN`s on CHANNEL, and reads the
tokens again as soon as a write that replaced one commits (`readcache.bump` sends the
notification in the write's transaction, and PostgreSQL delivers it at commit), and every
HEARTBEAT_SECONDS besides. A write this process commits is taken at once (`saw`).

The copy is trusted for MAX_LAG_SECONDS after the read that last confirmed it was sent. A
listener cut off from PostgreSQL (a partition, a hung server, a restart) stops confirming, and
callers go back to reading the tokens themselves, so a write shows on every server within
milliseconds and never later than MAX_LAG_SECONDS, whatever happens to the listener.

PostgreSQL only, and not behind PgBouncer in transaction mode (a session there is not ours:
no LISTEN). `READ_TOKEN_WATCH=0` turns it off.
"""

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections

logger = logging.getLogger("openstartup.tokenwatch")

CHANNEL = "openstartup_generation"
APPLICATION_NAME = "openstartup-token-watch"  # the listener's session in pg_stat_activity
HEARTBEAT_SECONDS = 0.25
MAX_LAG_SECONDS = 1.0
RETRY_SECONDS = 1.0
WAIT_SECONDS = 0.1


def available(alias: str) -> bool:
    """Whether `alias` can be watched: PostgreSQL, reached directly, and the setting on."""
    return (
        settings.READ_TOKEN_WATCH
        and not settings.PGBOUNCER_TRANSACTION_MODE
        and connections[alias].vendor == "postgresql"
    )


class TokenWatch:
    """One process's watched copy of the tokens of one database alias."""

    def __init__(self, alias: str, read_tokens: Callable[[Any], dict[str, str]]):
        """`read_tokens(cursor)` reads every kind's token (the read cache hands its query in)."""
        self.alias = alias
        self.read_tokens = read_tokens
        self._lock = threading.Lock()
        self._tokens: dict[str, str] | None = None
        self._confirmed = -math.inf  # when the read that confirmed `_tokens` was sent
        self._writes = 0  # writes this process took, to spot a read that raced one
        self._pid: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tokens(self) -> dict[str, str] | None:
        """The tokens, if confirmed within MAX_LAG_SECONDS; else None (read them yourself).
        The first call in a process starts the listener."""
        if self._pid != os.getpid():  # first use here (or a forked child): start listening
            self._start()
        if time.monotonic() - self._confirmed > MAX_LAG_SECONDS:
            return None
        return self._tokens

    def saw(self, kind: str, token: str) -> None:
        """A write of `kind` committed in this process: its new token is current here now."""
        with self._lock:
            self._writes += 1
            if self._tokens is not None:
                self._tokens = {**self._tokens, kind: token}

    def stop(self) -> None:
        """Stop listening (tests; a process that exits needs nothing)."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None:
            thread.join(timeout=10)
        self._pid, self._tokens, self._confirmed = None, None, -math.inf

    def _start(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid, self._tokens, self._confirmed = os.getpid(), None, -math.inf
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=self._listen, args=(self._stop,), name="token-watch", daemon=True
            )
            self._thread.start()

    def _listen(self, stop: threading.Event) -> None:
        failing = False
        while not stop.is_set():
            try:
                with psycopg.connect(**self._params(), autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if failing:
                        logger.warning("token watch: listening again")
                        failing = False
                    beat, woken = -math.inf, True
                    while not stop.is_set():
                        if woken or time.monotonic() >= beat:
                            beat = time.monotonic() + HEARTBEAT_SECONDS
                            self._refresh(conn)
                        # Short waits, so that `stop` is heard soon.
                        woken = any(conn.notifies(timeout=WAIT_SECONDS, stop_after=1))
            except Exception as error:  # noqa: BLE001 - any failure: callers read themselves
                self._confirmed = -math.inf
                if not failing:
                    logger.warning("token watch: lost PostgreSQL (%s)", type(error).__name__)
                    failing = True
                stop.wait(RETRY_SECONDS)

    def _refresh(self, conn: psycopg.Connection) -> None:
        with self._lock:
            writes = self._writes
        sent = time.monotonic()
        with conn.cursor() as cursor:
            tokens = self.read_tokens(cursor)
        with self._lock:
            if writes == self._writes:  # else a local write may be newer: the next beat reads
                self._tokens, self._confirmed = tokens, sent

    def _params(self) -> dict[str, Any]:
        """Django's own parameters for the alias (what it passes to psycopg.connect itself: it
        has already taken out its own options), unprepared and named in pg_stat_activity."""
        params = connections[self.alias].get_connection_params()
        return {**params, "prepare_threshold": None, "application_name": APPLICATION_NAME}
