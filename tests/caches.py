from django.core.cache import cache

from openstartup.readcache import clear_local


def clear_caches() -> None:
    """Empty the shared cache and this process's copies: what expiry does."""
    cache.clear()
    clear_local()
