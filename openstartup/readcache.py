"""Per-process copies of hot reads, kept exact by generation tokens in the shared cache.

Each kind of data ("auth": keys, accounts, subscriptions; "data": the startups) has a random
generation token in the shared cache (Redis). Every write that changes that kind replaces the
token (`bump`), at once and again after its transaction commits. A request reads all tokens in
one round trip, the first time it needs one, and a per-process entry is used only while the
token it was built under is still current. So N app servers answer alike: an entry that a write
on any server made stale is never served again by any of them, and there is no TTL window.

The token is read before the database, so an entry can only ever be older than its token, never
newer: a write that lands between the two replaces the token and the entry is discarded.

When the shared cache cannot be reached, no token can be read and every read goes to the
database. `READ_CACHE_SECONDS` (0 = off) also bounds an entry's life, for the case a token
replacement was lost (Redis unreachable during the write); it is off by default without Redis,
because Django's local-memory cache is per process and tokens there would not be shared.
"""

import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from django.conf import settings
from django.core import signals as core_signals
from django.core.cache import cache
from django.db import transaction
from django.dispatch import receiver
from redis import Redis
from redis.exceptions import RedisError

Kind = Literal["auth", "data"]
KINDS: tuple[Kind, ...] = ("auth", "data")
_KEY_PREFIX = "generation:"
logger = logging.getLogger("openstartup.cache")  # rate-limited to a line a minute (settings)

# The tokens read during the current request: None outside a request (read afresh each time),
# {} at the start of one (nothing read yet). Set by the request_started/finished receivers
# below (connected when this module is imported, which the key and startup services do).
_request_tokens: ContextVar[dict | None] = ContextVar("readcache_tokens", default=None)


# Set while reading rows to fill a copy: the replica router then reads from the primary.
_filling: ContextVar[bool] = ContextVar("readcache_filling", default=False)


@contextmanager
def filling() -> Iterator[None]:
    """Reads made to fill a copy (or a shared entry keyed by a token) go to the primary: a
    read replica may not have replayed the write whose token the request just read, and a
    copy made from it would stay stale under the new token."""
    reset = _filling.set(True)
    try:
        yield
    finally:
        _filling.reset(reset)


def is_filling() -> bool:
    return _filling.get()


@receiver(core_signals.request_started, dispatch_uid="readcache-request-started")
def _request_started(**kwargs: Any) -> None:
    _request_tokens.set({})


@receiver(core_signals.request_finished, dispatch_uid="readcache-request-finished")
def _request_finished(**kwargs: Any) -> None:
    _request_tokens.set(None)


def saves_only_last_login(update_fields: Any) -> bool:
    """Whether a post_save is a sign-in stamping `last_login`: it changes nothing any copy
    holds, so receivers skip it (a dashboard sign-in would otherwise drop every copy)."""
    return update_fields is not None and set(update_fields) <= {"last_login"}


def enabled() -> bool:
    return settings.READ_CACHE_SECONDS > 0


class _Tokens:
    """Reads and writes the tokens. With django-redis, through a redis-py client that holds
    one connection of django-redis's pool per thread: a token is a short string that needs no
    pickling, and skipping django-redis's layer and the pool's checkout per command halves
    the cost of the one round trip every request makes. Otherwise (the local-memory cache
    of development and tests) through Django's cache API."""

    def __init__(self) -> None:
        self._held = threading.local()

    def _client(self) -> Redis:
        """This thread's client (connecting may raise RedisError)."""
        pool = cache.client.get_client(write=True).connection_pool
        held = getattr(self._held, "client", None)
        if held is None or held.connection_pool is not pool or self._held.pid != os.getpid():
            held = Redis(connection_pool=pool, single_connection_client=True)
            self._held.client, self._held.pid = held, os.getpid()
        return held

    def _key(self, kind: Kind) -> str:
        return cache.make_key(_KEY_PREFIX + kind)

    def read(self) -> dict[str, bytes]:
        """The current tokens ({} when the shared cache cannot be reached)."""
        if getattr(cache, "client", None) is None:
            found = cache.get_many([_KEY_PREFIX + kind for kind in KINDS])
            tokens = {
                kind: found[_KEY_PREFIX + kind] for kind in KINDS if _KEY_PREFIX + kind in found
            }
        else:
            try:
                values = self._client().mget([self._key(kind) for kind in KINDS])
            except RedisError as error:
                logger.warning("Redis unreachable, serving from the database: %s", error)
                return {}
            # Opaque bytes, compared as they are: whatever a token holds is never parsed.
            tokens = {kind: value for kind, value in zip(KINDS, values, strict=True) if value}
        for kind in KINDS:
            if kind in tokens:
                continue
            # Never written, or evicted: start one. When that fails (a racing reader started
            # it first, or the cache is unreachable) the kind goes uncached for this request.
            token = secrets.token_bytes(8)
            if not self.write(kind, token, only_new=True):
                break
            tokens[kind] = token
        return tokens

    def write(self, kind: Kind, token: bytes, *, only_new: bool = False) -> bool:
        if getattr(cache, "client", None) is None:
            if only_new:
                return cache.add(_KEY_PREFIX + kind, token, timeout=None)
            cache.set(_KEY_PREFIX + kind, token, timeout=None)
            return True
        try:
            return bool(self._client().set(self._key(kind), token, nx=only_new))
        except RedisError as error:
            logger.warning("Redis unreachable, copies not marked stale: %s", error)
            return False


_tokens = _Tokens()


def current(kind: Kind) -> bytes | None:
    """The kind's token, read once per request; None when the shared cache is unreachable."""
    tokens = _request_tokens.get()
    if tokens is None:
        return _tokens.read().get(kind)
    if not tokens:  # first use in this request: one round trip for every kind
        tokens.update(_tokens.read(), _read=True)
    return tokens.get(kind)


def _replace(kind: Kind) -> None:
    token = secrets.token_bytes(8)
    _tokens.write(kind, token)
    tokens = _request_tokens.get()
    if tokens:
        tokens[kind] = token


def bump(kind: Kind) -> None:
    """Mark every copy of `kind` stale, on every server: now, and once more after the current
    transaction commits (a reader between the two may have copied uncommitted-over rows)."""
    _replace(kind)
    transaction.on_commit(lambda: _replace(kind))


class LocalCache:
    """A bounded per-process map whose entries live while their kind's token is current."""

    def __init__(self, kind: Kind, *, max_entries: int):
        self.kind = kind
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[bytes, float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The entry for `key` if still current, else `build()` (kept unless it is None)."""
        found, token = self.lookup([key])
        if key in found:
            return found[key]
        with filling():
            value = build()
        if value is not None and token is not None:
            self.put(key, value, token)
        return value

    def token(self) -> bytes | None:
        """The token to `put` entries under; read before the database, never after."""
        return current(self.kind) if enabled() else None

    def lookup(self, keys: list[Hashable]) -> tuple[dict, bytes | None]:
        """The current entries among `keys`, and the token to `put` what was missing under
        (None: nothing may be kept now)."""
        token = self.token()
        if token is None:
            return {}, None
        now, found = time.monotonic(), {}
        for key in keys:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == token and entry[1] > now:
                found[key] = entry[2]
        return found, token

    def put(self, key: Hashable, value: Any, token: bytes) -> None:
        expires = time.monotonic() + settings.READ_CACHE_SECONDS
        with self._lock:
            self._entries[key] = (token, expires, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
