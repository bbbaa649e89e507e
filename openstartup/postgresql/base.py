"""Django's PostgreSQL backend, one change: a connection opened by a web request gives up by the
request's database deadline (openstartup/dbdeadline.py), not only after DB_CONNECT_TIMEOUT, so a
request that reconnects to a hung or vanished server still answers 503 in time."""

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
