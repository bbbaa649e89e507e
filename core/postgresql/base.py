"""Django's PostgreSQL backend, two changes:

- a connection opened by a web request gives up by the request's database deadline
  (core/dbdeadline.py), not only after DB_CONNECT_TIMEOUT, so a request that reconnects
  to a hung or vanished server still answers 503 in time;
- `prepared_cursor()`: a cursor that binds parameters on the server, for the few statements
  nearly every request sends (see `core.postgresql.prepared_cursor`);
- `prepared_rows()`: the rows of the one statement nearly every request sends, through a
  cursor kept per connection.
"""

import functools
from contextvars import ContextVar

import psycopg.connection
from django.db.backends.postgresql import base

from core import dbdeadline

# Seconds this thread's next connect may take, when the request's deadline leaves less than
# libpq's whole-second, at-least-2 `connect_timeout` would (None: that timeout applies).
_connect_limit: ContextVar[float | None] = ContextVar("connect_limit", default=None)
_timeout_from_conninfo = psycopg.connection.timeout_from_conninfo


def _timeout(params):
    """psycopg's connect timeout (it waits for the connection itself, in Python), cut to what
    the request's deadline leaves: libpq's rule of whole seconds, at least 2, would let a
    reconnect started just before the deadline outlive it by up to 2 s."""
    limit = _connect_limit.get()
    configured = _timeout_from_conninfo(params)
    return configured if limit is None else min(configured, limit)


psycopg.connection.timeout_from_conninfo = _timeout


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict):
        remaining = dbdeadline.remaining()
        if remaining is None:
            return super().get_new_connection(conn_params)
        if remaining <= 0:
            raise dbdeadline.DeadlineExceeded("The request's database deadline has passed.")
        reset = _connect_limit.set(remaining)
        try:
            return super().get_new_connection(conn_params)
        finally:
            _connect_limit.reset(reset)

    _kept_cursor = None

    def prepared_rows(self, sql: str) -> list[tuple]:
        """The rows of `sql` (plain, no parameters), prepared by its 5th use, through one
        psycopg cursor kept for the connection. Django's cursor wrapper and a new cursor per
        call were about 30 us of client CPU on a 70 us statement (measured in-process), and
        this one is nearly every request's. What Django's cursor does that matters is kept:
        the health check and reconnecting, the broken-transaction check, database errors as
        Django's (which also closes a failed connection at the request's end) and the execute
        wrappers (the request's deadline, the tests' own). With queries logged (DEBUG, the test
        suite's capture) Django's own cursor runs it, so it is logged like any query."""
        if self.queries_logged:
            with self.prepared_cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall()
        self.close_if_health_check_failed()
        self.ensure_connection()
        self.validate_no_broken_transaction()
        cursor = self._kept_cursor
        if cursor is None or cursor.connection is not self.connection:
            cursor = self._kept_cursor = base.ServerBindingCursor(self.connection)

        def execute(sql, params, many, context):
            with self.wrap_database_errors:
                cursor.execute(sql)
                return cursor.fetchall()

        for wrapper in reversed(self.execute_wrappers):
            execute = functools.partial(wrapper, execute)
        return execute(sql, None, False, {"connection": self, "cursor": cursor})

    def prepared_cursor(self):
        """As `cursor()` (the same connection, health check and wrappers: the request's
        deadline guard, the test suite's query capture), but binding parameters on the server,
        so psycopg prepares a statement after its `prepare_threshold`-th use (5; None behind
        PgBouncer in transaction mode) and PostgreSQL plans it once per connection. Only for
        plain SQL whose parameters have the types their columns want (or explicit casts):
        Django's compiled queries expect client-side binding."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = base.ServerBindingCursor(self.connection)
            return self._prepare_cursor(cursor)
