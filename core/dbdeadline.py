"""The per-request database deadline: a request that cannot be served in time answers 503.

Every request gets `DB_REQUEST_DEADLINE_SECONDS` (from its start) for its database work on
PostgreSQL, on every alias (the primary and the read replica alike). Three things enforce it:

- PostgreSQL's own `statement_timeout` (the same number of seconds), set once on each
  connection a web request opens: a slow query is cancelled by the server, cleanly.
- A watchdog thread: when a request is still waiting on the database at its deadline (a server
  that accepts and never answers or is frozen, a network that drops every packet, a round trip
  that takes seconds), it shuts down the socket of each of the request's connections that has a
  command in progress (a query, a commit, a health check, a cursor fetch). The blocked call
  returns at once with an error, the request answers `503 service_unavailable` ("slow"), and
  Django discards the connection. Work the request does outside the database is never
  interrupted.
- Once the deadline has passed, a further query of that request fails at once.

The deadline covers Django's whole middleware stack (`DatabaseDeadlineMiddleware`, first in
MIDDLEWARE) and ends with it, however the request ends.

Connecting is bounded by `DB_CONNECT_TIMEOUT` and, in a request, by what is left of the deadline
(core/postgresql: psycopg waits for the connection itself, and that wait is cut to
what the deadline leaves), so a request answers within the deadline plus a moment.
`bounded()` gives one step (a probe of one alias, the replica check) a shorter deadline of its
own. `/healthz` needs no database and gets no deadline.
Management commands and the refresh worker are not web requests: no deadline.
"""

import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import OperationalError, connections
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

try:
    from psycopg.pq import TransactionStatus

    _ACTIVE = TransactionStatus.ACTIVE
except ImportError:  # SQLite-only installs: the deadline applies to PostgreSQL only
    _ACTIVE = None


class DeadlineExceeded(OperationalError):
    """The request's database deadline passed before this query could run."""


class _Watch:
    """One request's deadline, the connections it covers (every PostgreSQL alias) and which
    alias the request reads the dataset from (core/replica.py decides once)."""

    __slots__ = ("expires", "wrappers", "expired", "read_alias")

    def __init__(self, expires: float, wrappers: list[Any]):
        self.expires = expires
        self.wrappers = wrappers
        self.expired = False
        self.read_alias: str | None = None

    def fire(self) -> None:
        self.expired = True  # the next query fails at once
        for wrapper in self.wrappers:
            _cut_if_busy(wrapper)


def _cut_if_busy(wrapper: Any) -> None:
    """Shut down the socket of `wrapper`'s connection if a command is in progress on it (a
    query, a commit, Django's health check, a fetch from a server-side cursor): the blocked
    call returns at once with an error. An idle connection is left alone."""
    raw = getattr(wrapper, "connection", None)
    try:
        if raw is None or raw.closed or raw.pgconn.transaction_status != _ACTIVE:
            return
        fd = raw.fileno()
    except Exception:  # closed or half-open meanwhile: nothing to cut
        return
    if fd < 0:
        return
    try:
        # A duplicate of the descriptor: shutdown() acts on the connection they share,
        # waking the blocked call, and closing the duplicate leaves psycopg's own alone.
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Watchdog:
    """One daemon thread per process that fires the watches whose deadline has passed.

    The thread is woken only when a new deadline is sooner than the time it already sleeps
    until, and it never sleeps longer than one deadline period: every request has the same
    deadline, so it wakes about once per period instead of once per request (waking it on
    every request cost a quarter of the throughput of the cheapest requests: a thread switch
    and a GIL hand-off each)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watches: set[_Watch] = set()
        self._pid: int | None = None
        self._wake_at = math.inf  # when the thread wakes on its own (inf: only if notified)

    def _plan(self, expires: float) -> None:
        """Wake the thread if it would sleep past `expires` (call with the lock held)."""
        if expires < self._wake_at:
            self._wake_at = expires
            self._cond.notify()

    def arm(self, watch: _Watch) -> None:
        with self._cond:
            if self._pid != os.getpid():  # first use in this (possibly forked) process
                self._pid = os.getpid()
                self._watches = set()
                self._wake_at = math.inf
                threading.Thread(target=self._run, name="db-deadline", daemon=True).start()
            self._watches.add(watch)
            self._plan(watch.expires)

    def disarm(self, watch: _Watch) -> None:
        with self._cond:
            self._watches.discard(watch)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [watch for watch in self._watches if watch.expires <= now]
                self._watches.difference_update(due)
                if not due:
                    soonest = min((watch.expires for watch in self._watches), default=None)
                    # With nothing armed, wake after one deadline period anyway: a request
                    # armed from now on expires later than that, so it need not wake us.
                    self._wake_at = now + max(seconds(), 1) if soonest is None else soonest
                    self._cond.wait(self._wake_at - now)
                    continue
            for watch in due:
                watch.fire()


_watchdog = _Watchdog()
_current: ContextVar[_Watch | None] = ContextVar("db_deadline", default=None)


def seconds() -> int:
    return settings.DB_REQUEST_DEADLINE_SECONDS


# /readyz answers sooner than a request may take: a probe must not outlive its own timeout.
READYZ_DEADLINE_SECONDS = 2
# Paths that never touch the database (the liveness probe): no deadline to arm.
NO_DATABASE_PATHS = frozenset({"/healthz"})


def shorten(limit: float) -> None:
    """Bring the current request's deadline forward to at most `limit` seconds from now."""
    watch = _current.get()
    if watch is not None:
        with _watchdog._cond:
            watch.expires = min(watch.expires, time.monotonic() + limit)
            _watchdog._plan(watch.expires)


def remaining() -> float | None:
    """Seconds left before the current request's database deadline; None outside a request."""
    watch = _current.get()
    if watch is None:
        return None
    return 0.0 if watch.expired else watch.expires - time.monotonic()


@contextmanager
def bounded(limit: float) -> Iterator[None]:
    """Run the block under a deadline of at most `limit` seconds from now (a probe of one
    alias, the replica's check); afterwards the request's own deadline applies again."""
    watch = _current.get()
    if watch is None:
        yield
        return
    expires = watch.expires
    shorten(limit)
    try:
        yield
    finally:
        with _watchdog._cond:
            watch.expires = expires
            watch.expired = time.monotonic() >= expires
            _watchdog._plan(expires)
            _watchdog._watches.add(watch)  # fired early: armed again for its own deadline


def current() -> "_Watch | None":
    return _current.get()


def exceeded() -> bool:
    """Whether the current request's database deadline has passed."""
    watch = _current.get()
    return watch is not None and (watch.expired or time.monotonic() >= watch.expires)


def _guard(execute, sql, params, many, context):
    watch = _current.get()
    if watch is None:
        return execute(sql, params, many, context)
    if watch.expired or time.monotonic() >= watch.expires:
        watch.expired = True
        raise DeadlineExceeded("The request's database deadline has passed.")
    return execute(sql, params, many, context)


def _applies(wrapper: Any) -> bool:
    return wrapper.vendor == "postgresql" and seconds() > 0


class DatabaseDeadlineMiddleware:
    """First in MIDDLEWARE: everything a request does inside Django's stack (every middleware,
    the view) runs under its database deadline, and the deadline ends with the stack, whatever
    happens (a response that is never read to the end, an exception)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path in NO_DATABASE_PATHS:
            return self.get_response(request)
        wrappers = [connections[alias] for alias in connections if _applies(connections[alias])]
        if not wrappers:
            return self.get_response(request)
        for wrapper in wrappers:
            if _guard not in wrapper.execute_wrappers:
                wrapper.execute_wrappers.append(_guard)
        watch = _Watch(time.monotonic() + seconds(), wrappers)
        reset = _current.set(watch)
        _watchdog.arm(watch)
        try:
            return self.get_response(request)
        finally:
            _watchdog.disarm(watch)
            _current.reset(reset)


@receiver(connection_created, dispatch_uid="db-deadline-statement-timeout")
def _statement_timeout(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Connections opened by web requests get the server-side statement timeout (PgBouncer in
    transaction mode shares sessions, so there it belongs in the pool's or role's settings)."""
    if _current.get() is None or not _applies(connection) or settings.PGBOUNCER_TRANSACTION_MODE:
        return
    milliseconds = seconds() * 1000
    connection.connection.execute(f"SET statement_timeout = {int(milliseconds)}")
