from django.core.cache import cache

from aisurface.cache import clear_local


def clear_caches() -> None:
    """Empty the shared cache and this process's mirrors of it: what expiry does."""
    cache.clear()
    clear_local()
