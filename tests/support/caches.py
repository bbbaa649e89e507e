import os

from django.core.cache import cache

from core.readcache import clear_local


def clear_caches() -> None:
    """Empty the shared cache and this process's copies: what expiry does."""
    cache.clear()
    clear_local()


# Charging records and writing their hold (quota/services.py) is one statement on PostgreSQL
# and a transaction (savepoint, UPDATE, INSERT, release) on SQLite.
EXTRA_RESERVE_QUERIES = 0 if os.environ.get("DATABASE_URL", "").startswith("postgres") else 3
