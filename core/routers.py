"""Database routing: dataset reads may go to a read replica; everything else stays on the primary.

Enabled by DATABASE_REPLICA_URL (the settings then define a `replica` alias). Only the published
dataset (the `startups` app: startups, founders, socials, verified revenue) is read from the
replica, and only by a request for which the replica is up and has replayed every write the
primary had when the request began (core/replica.py); otherwise the primary. Quota
counters, API keys, subscriptions and accounts are read and written on the primary only: an
allowance or a revoked key must never be judged from a stale copy.
"""

from django.conf import settings
from django.db import connections, models

from core import replica

REPLICA = "replica"
PRIMARY = "default"
# Apps whose reads may be served by the replica.
REPLICA_APPS = frozenset({"startups"})


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


class ReplicaRouter:
    def db_for_read(self, model: type[models.Model], **hints) -> str:
        if model._meta.app_label not in REPLICA_APPS or not replica_configured():
            return PRIMARY
        if connections[PRIMARY].in_atomic_block:
            # Inside a transaction on the primary (a seed, a sync, an admin save) reads must
            # see its own uncommitted writes.
            return PRIMARY
        instance = hints.get("instance")
        if instance is not None and instance._state.db == PRIMARY:
            # Related rows of an object read on the primary stay on the primary.
            return PRIMARY
        return replica.read_alias()

    def db_for_write(self, model: type[models.Model], **hints) -> str:
        return PRIMARY

    def allow_relation(self, obj1: models.Model, obj2: models.Model, **hints) -> bool:
        # Both aliases hold the same data (streaming replication).
        return True

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        # The replica receives the schema by replication, never by `migrate`.
        return db == PRIMARY
