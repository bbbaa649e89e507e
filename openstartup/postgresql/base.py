"""Django's PostgreSQL backend, two changes:

- a connection opened by a web request gives up by the request's database deadline
  (openstartup/dbdeadline.py), not only after DB_CONNECT_TIMEOUT, so a request that reconnects
  to a hung or vanished server still answers 503 in time;
- `prepared_cursor()`: a cursor that binds parameters on the server, for the few statements
  nearly every request sends (see `openstartup.postgresql.prepared_cursor`).
"""

import math

from django.db.backends.postgresql import base

from openstartup import dbdeadline


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict):
        remaining = dbdeadline.remaining()
        if remaining is not None:
            if remaining <= 0:
                raise dbdeadline.DeadlineExceeded("The request's database deadline has passed.")
            configured = conn_params.get("connect_timeout") or math.inf
            # libpq counts whole seconds and treats less than 2 as 2.
            seconds = max(2, min(configured, math.ceil(remaining)))
            conn_params = {**conn_params, "connect_timeout": seconds}
        return super().get_new_connection(conn_params)

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
