import os

from django.core.cache import cache

from core.readcache import clear_local


def clear_caches() -> None:
    """Empty the shared cache and this process's copies: what expiry does."""
    cache.clear()
    clear_local()


# Charging records and writing their hold (quota/services.py) is one statement on PostgreSQL
# and a transaction (savepoint, UPDATE, INSERT, release) on SQLite.
ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith("postgres")
EXTRA_RESERVE_QUERIES = 0 if ON_POSTGRES else 3
# Confirming a delivered answer (deleting its hold) is a statement of its own once the answer is
# written on SQLite; on PostgreSQL the process's next charge carries it (quota/confirmations.py).
DELIVERY_QUERIES = 0 if ON_POSTGRES else 1
