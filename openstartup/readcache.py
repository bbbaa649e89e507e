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

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, Literal

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

Kind = Literal["auth", "data"]
KINDS: tuple[Kind, ...] = ("auth", "data")
_KEY_PREFIX = "generation:"

# The tokens read during the current request: None outside a request (read afresh each time),
# {} at the start of one (nothing read yet). Set by the request_started/finished receivers.
_request_tokens: ContextVar[dict | None] = ContextVar("readcache_tokens", default=None)


def request_started(**kwargs: Any) -> None:
    _request_tokens.set({})


def request_finished(**kwargs: Any) -> None:
    _request_tokens.set(None)


def enabled() -> bool:
    return settings.READ_CACHE_SECONDS > 0


def _read_tokens() -> dict[str, str]:
    keys = {kind: _KEY_PREFIX + kind for kind in KINDS}
    found = cache.get_many(list(keys.values()))
    tokens = {kind: found[key] for kind, key in keys.items() if key in found}
    for kind in KINDS:
        if kind in tokens:
            continue
        # Never written, or evicted: start one. When that fails (a racing reader started it
        # first, or the cache is unreachable) the kind goes uncached for this request.
        token = secrets.token_hex(8)
        if not cache.add(keys[kind], token, timeout=None):
            break
        tokens[kind] = token
    return tokens


def current(kind: Kind) -> str | None:
    """The kind's token, read once per request; None when the shared cache is unreachable."""
    tokens = _request_tokens.get()
    if tokens is None:
        return _read_tokens().get(kind)
    if not tokens:  # first use in this request: one round trip for every kind
        tokens.update(_read_tokens(), _read=True)
    return tokens.get(kind)


def _replace(kind: Kind) -> None:
    token = secrets.token_hex(8)
    cache.set(_KEY_PREFIX + kind, token, timeout=None)
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
        self._entries: OrderedDict[Hashable, tuple[str, float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The entry for `key` if still current, else `build()` (kept unless it is None)."""
        token = current(self.kind) if enabled() else None
        if token is None:
            return build()
        entry = self._entries.get(key)
        if entry is not None and entry[0] == token and entry[1] > time.monotonic():
            return entry[2]
        value = build()
        if value is not None:
            self.put(key, value, token)
        return value

    def put(self, key: Hashable, value: Any, token: str) -> None:
        expires = time.monotonic() + settings.READ_CACHE_SECONDS
        with self._lock:
            self._entries[key] = (token, expires, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
