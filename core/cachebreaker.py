"""A circuit breaker for the shared cache: after a Redis failure, stop waiting on Redis.

django-redis already turns a failed call into a miss (IGNORE_EXCEPTIONS), but each call still
waits up to its socket timeout, and a request makes several. `BreakerClient` remembers the
failure: for `REDIS_BREAKER_SECONDS` every call fails at once (a miss, or a skipped write), then
one call is let through to try again. Correctness never depends on this: the read cache's
tokens live in the database (core/readcache.py), so a skipped write loses nothing but
speed. State is per process.
"""

import functools
import threading
import time
from typing import Any

from django.conf import settings
from django.dispatch import receiver
from django.test.signals import setting_changed
from django_redis.client import DefaultClient
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError


class Breaker:
    def __init__(self) -> None:
        self._open_until = 0.0
        self._lock = threading.Lock()

    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self) -> None:
        with self._lock:
            self._open_until = time.monotonic() + settings.REDIS_BREAKER_SECONDS

    def reset(self) -> None:
        self._open_until = 0.0


breaker = Breaker()

# The calls the project makes through Django's cache API.
_GUARDED = (
    "get",
    "set",
    "add",
    "get_many",
    "set_many",
    "delete",
    "delete_many",
    "has_key",
    "incr",
    "decr",
    "touch",
    "expire",
    "ttl",
    "clear",
)


def _guarded(name: str):
    method = getattr(DefaultClient, name)

    @functools.wraps(method)
    def call(self, *args: Any, **kwargs: Any) -> Any:
        if breaker.is_open():
            error = ConnectionInterrupted(connection=None)
            error.__cause__ = RedisConnectionError("circuit open after a recent Redis failure")
            raise error
        try:
            return method(self, *args, **kwargs)
        except ConnectionInterrupted:
            breaker.trip()
            raise

    return call


class BreakerClient(DefaultClient):
    """django-redis's default client behind the process's breaker."""


for _name in _GUARDED:
    setattr(BreakerClient, _name, _guarded(_name))


@receiver(setting_changed, dispatch_uid="cachebreaker-new-cache")
def _new_cache(setting: str, **kwargs: Any) -> None:
    if setting == "CACHES":  # another Redis (tests): start closed
        breaker.reset()
