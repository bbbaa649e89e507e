"""The read cache's mechanism: its staleness rule and its stores (no app imported here).

One rule. Each kind of data ("auth": keys, accounts, subscriptions; "data": the startups;
"fresh": the sync times a sync that changed nothing stamps, read beside the copies:
core/beside.py) has a random generation token kept in the database
(`core.models.Generation`). Every write that changes a kind replaces its token in the same
transaction (`bump`, called for the models each app registers in its apps.py:
core/invalidation.py). A request reads all tokens in one small
query the first time it needs one, and anything cached is used only under the token it was
built with. So every server answers alike from the moment a write commits, and nothing the
shared cache (Redis) does (paused, partitioned, restarted from an old snapshot, failed over)
can bring a revoked key or an old plan back: Redis never holds a token.

One exception, for speed: a request that needs only the data token (an anonymous one: a
cached `/api/ai` answer, a public page, MCP) takes it from this process's watch instead
(core/tokenwatch.py, PostgreSQL's LISTEN/NOTIFY), so a cached answer sends no query.
Other servers' writes show there within milliseconds, never later than the watch's
MAX_LAG_SECONDS (1 s) when the watch is cut off. The "auth" token (keys, plans) is always read.

The token is read before the rows a copy is built from, so a copy can only be older than its
token, never newer: a write that commits between the two replaced the token, and the copy is
never served. Rows that fill a copy are read from `fill_db()`: the primary, or the replica
once it has replayed the write that produced the data token (its highest change sequence has
reached the token's; core/replica.py), never a replica that may not have replayed it yet.
Builders take it through `@fills_cache`; auth copies always fill from the primary.

Two stores, one key scheme:
- per-process copies (`LocalCache`, and per-startup `rowcopies.RowCopies` from `row_copies`);
- shared entries in Django's cache (`shared_get` / `shared_set` / `shared_add`), keyed by the
  token, so another server's fill is reused and a write starts afresh; `wait_or_claim` lets
  one process make what the others wait for. Redis failures open a circuit breaker
  (core/cachebreaker.py): for a few seconds no request waits on Redis, and the database
  answers; correctness never depends on Redis.

The uses live beside their data: key records (apikeys/services.py), list pages and the rank
index copy (startups/pagecache.py), profile JSON (restapi/profiles.py), AI answers
(aisurface/cache.py). `READ_CACHE_SECONDS` (0 = off) bounds a copy's life and turns
per-process copies on or off.
"""

import functools
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, Literal

from django.conf import settings
from django.core import signals as core_signals
from django.core.cache import cache
from django.db import InterfaceError, OperationalError, transaction
from django.db import connections as db_connections
from django.dispatch import receiver

from core import dbdeadline, replica, rowcopies, tokenwatch
from core.models import GENERATION_TOKENS_SQL, Generation, generation_tokens
from core.postgresql import prepared_cursor, prepared_rows

# "fresh": the sync times a sync that changed nothing stamps (no Change row, the data token
# kept): fields read beside the kept copies (core/beside.py), never inside them.
Kind = Literal["auth", "data", "fresh"]
KINDS: tuple[Kind, ...] = ("auth", "data", "fresh")
WATCHED: tuple[Kind, ...] = ("data", "fresh")  # a lag of milliseconds is harmless for these
PRIMARY = "default"

# The tokens read during the current request: None outside a request (read afresh each time),
# {} at the start of one (nothing read yet).
_request_tokens: ContextVar[dict | None] = ContextVar("readcache_tokens", default=None)


@receiver(core_signals.request_started, dispatch_uid="readcache-request-started")
def _request_started(**kwargs: Any) -> None:
    _request_tokens.set({})


@receiver(core_signals.request_finished, dispatch_uid="readcache-request-finished")
def _request_finished(**kwargs: Any) -> None:
    _request_tokens.set(None)


def enabled() -> bool:
    return settings.READ_CACHE_SECONDS > 0


def fill_db(kind: Kind = "data", *, token: str | None = None) -> str:
    """The database a copy of `kind` is filled from, the one place that chooses. Data copies:
    the replica once it has replayed the write that produced the data token the copy is filed
    under (its change sequence has reached the token's: the request's, or a newer `token`
    the copy is of), else the primary (core/replica.py `fill_alias`). Auth copies (key
    records: a revocation, a plan change): always the primary, since auth writes carry no
    change sequence a replica could be checked against."""
    if kind != "data" or not replica.configured():
        return PRIMARY  # no token read just to choose: without a replica there is no choice
    return replica.fill_alias(token or current("data"))


def fills_cache(build: Callable[..., Any] | None = None, *, kind: Kind = "data") -> Any:
    """Decorate a function that fills a cached copy of `kind`: it is called with
    `db=fill_db(kind)`, so no builder has to remember where a copy's rows must come from.
    `@fills_cache` for data copies, `@fills_cache(kind="auth")` for auth copies."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def filled(*args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs, db=fill_db(kind))

        return filled

    return decorate if build is None else decorate(build)


def _new_token() -> str:
    return secrets.token_hex(8)


def read_tokens() -> dict[str, str]:
    """Every kind's current token, from the primary (one query; a second one the first time
    a kind has none, e.g. on an empty database)."""
    tokens = _select_tokens()
    missing = [kind for kind in KINDS if kind not in tokens]
    if missing:
        Generation.objects.using(PRIMARY).bulk_create(
            [Generation(kind=kind, token=_new_token()) for kind in missing],
            ignore_conflicts=True,
        )
        tokens = _select_tokens()
    return tokens


def _select_tokens() -> dict[str, str]:
    """Every kind's token: the first query of nearly every request, so it is also the
    request's connection health check (CONN_HEALTH_CHECKS would first send `SELECT 1`, a
    second round trip on every request): a kept connection that fails it is closed and the
    query sent once more on a new one, as the health check would have done."""
    connection = db_connections[PRIMARY]
    unchecked = (
        connection.connection is not None
        and connection.health_check_enabled
        and not connection.health_check_done
        and not connection.in_atomic_block
    )
    if unchecked:
        connection.health_check_done = True
        try:
            return _token_rows(connection)
        except (OperationalError, InterfaceError):
            if dbdeadline.exceeded():
                raise
            connection.close()  # the kept connection is broken: a new one, once
    return _token_rows(connection)


def _token_rows(connection: Any) -> dict[str, str]:
    return dict(prepared_rows(connection, GENERATION_TOKENS_SQL))


def current(kind: Kind) -> str | None:
    """The kind's token, read once per request (and kept for the rest of it, so whatever the
    request fills is filed under the token it read first)."""
    tokens = _request_tokens.get()
    if tokens is None:
        return read_tokens().get(kind)
    if kind in tokens:
        return tokens[kind]
    if kind in WATCHED and (watched := _watched_token(kind)) is not None:
        tokens[kind] = watched
        return watched
    # One query for every kind; a data token the request already holds stays.
    tokens.update({**read_tokens(), **tokens})
    return tokens.get(kind)


@contextmanager
def snapshot(db: str) -> Iterator[str | None]:
    """One read snapshot of `db`: a REPEATABLE READ, READ ONLY transaction, and the data
    token as that snapshot has it. Every statement sent through `db` inside it sees the data
    of that token and no write committed later, so reads that must agree with one another
    (the rank index moved on by the changes, a page's ids beside it) cannot be raced apart.
    None where there is no such snapshot here: SQLite (whose transactions here take the
    write lock), or a connection already inside a transaction (its isolation level is set)."""
    connection = db_connections[db]
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield None
        return
    with transaction.atomic(using=db):
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield dict(prepared_rows(connection, GENERATION_TOKENS_SQL)).get("data")


TOKEN_WATCH = tokenwatch.TokenWatch(PRIMARY, generation_tokens)


def _watched_token(kind: Kind) -> str | None:
    """The data (or fresh) token as this process's watch holds it, where a lag of
    milliseconds is harmless: never the auth token (a revoked key or a changed plan is always
    read from the database), never inside a transaction (which must see its own writes), and
    only while the watch is confirmed (core/tokenwatch.py)."""
    if db_connections[PRIMARY].in_atomic_block or not tokenwatch.available(PRIMARY):
        return None
    return (TOKEN_WATCH.tokens() or {}).get(kind)


def bump(kind: Kind, token: str | None = None) -> None:
    """Mark everything cached of `kind` stale on every server. The new token is written in
    the current transaction, so it becomes current exactly when the write does (and a write
    rolled back leaves the old token, under which nothing of it was ever kept). A data token
    without a `token` given starts a new epoch: every per-startup copy is dropped too; the
    change service gives `<epoch>.<sequence>` (core/rowcopies.py)."""
    token = token or _new_token()
    connection = db_connections[PRIMARY]
    with prepared_cursor(connection) as cursor:
        if connection.vendor == "postgresql":
            # The notice is delivered to every watching process when this transaction commits.
            cursor.execute(_TOKEN_WRITE_NOTIFY_SQL, [token, kind, tokenwatch.CHANNEL, kind])
            written = cursor.fetchone()[0]
        else:
            cursor.execute(_TOKEN_WRITE_SQL, [token, kind])
            written = cursor.rowcount
    if not written:  # the kind's first token
        Generation.objects.using(PRIMARY).bulk_create(
            [Generation(kind=kind, token=token)], ignore_conflicts=True
        )
        Generation.objects.using(PRIMARY).filter(kind=kind).update(token=token)
    transaction.on_commit(partial(TOKEN_WATCH.saw, kind, token), using=PRIMARY)
    settled(kind)
    tokens = _request_tokens.get()
    if tokens is not None:
        tokens.clear()  # read again (this request may fill copies after its own write)


# A token's write: plain SQL, prepared on PostgreSQL (every visible write and every sync's
# stamp sends it), and there one statement with the notice to the other servers.
_TOKEN_WRITE_SQL = f'UPDATE "{Generation._meta.db_table}" SET token = %s WHERE kind = %s'  # noqa: S608
_TOKEN_WRITE_NOTIFY_SQL = (
    f"WITH written AS ({_TOKEN_WRITE_SQL} RETURNING kind)"  # noqa: S608
    " SELECT (SELECT count(*) FROM written), pg_notify(%s, %s)"
)
_TOKEN_FOR_UPDATE_SQL = f"{GENERATION_TOKENS_SQL} WHERE kind = %s"


def epoch_for_update(kind: Kind) -> str | None:
    """The epoch of `kind`'s current token, its row locked until the transaction ends (the
    change service and the sync stamps then write `<epoch>.<sequence>`: the lock orders them
    after any other write of the token in flight, so sequences follow commit order; taken
    before any lock of their own, as `bump` takes it). Plain SQL, prepared on PostgreSQL: the
    refresh worker sends it with every sync; SQLite locks the whole database for a write
    transaction, and has no FOR UPDATE."""
    connection = db_connections[PRIMARY]
    lock = " FOR UPDATE" if connection.vendor == "postgresql" else ""
    with prepared_cursor(connection) as cursor:
        cursor.execute(_TOKEN_FOR_UPDATE_SQL + lock, [kind])
        row = cursor.fetchone()
    return rowcopies.parse(row[1] if row else None)[0]


# Bulk writes awaiting their kind's `bump` in the current transaction, per connection (each
# thread has its own): kind -> a marker of the write (core/invalidation.py).
_pending = threading.local()


def awaiting_bump(kind: Kind, marker: object) -> None:
    """A bulk write of `kind` in this transaction that its own `bump` should follow."""
    if not hasattr(_pending, "kinds"):
        _pending.kinds = {}
    _pending.kinds[kind] = marker


def settled(kind: Kind) -> None:
    """`kind` was bumped in this transaction: nothing of it awaits a bump any more."""
    getattr(_pending, "kinds", {}).pop(kind, None)


def unsettled(kind: Kind, marker: object) -> bool:
    """Whether the bulk write `marker` names still awaits its kind's bump."""
    return getattr(_pending, "kinds", {}).get(kind) is marker


# The change sequence's reader, registered by the app that owns it (startups): the (startup
# id, sequence) of the changes in (after, upto], read from the primary.
_change_reader: list[Callable[[int, int], list[tuple[int, int]]]] = []


def register_change_reader(reader: Callable[[int, int], list[tuple[int, int]]]) -> None:
    _change_reader[:] = [reader]


def _changed(after: int, upto: int) -> list[tuple[int, int]]:
    if not _change_reader:
        raise RuntimeError("no change reader registered: every copy of the epoch is dropped")
    return _change_reader[0](after, upto)


# This process's last applied change sequence (per-startup copies drop only what changed).
CHECKPOINT = rowcopies.Checkpoint(_changed)


def row_stamp(token: str | None = None) -> rowcopies.Stamp | None:
    """The stamp to look up and keep per-startup copies under (read before the database): of
    the request's data token, or of a newer `token` what the request shows was read at."""
    return CHECKPOINT.stamp(token or current("data")) if enabled() else None


def row_copies(max_entries: int) -> rowcopies.RowCopies:
    """Per-startup copies invalidated row by row from the change sequence."""
    seconds = lambda: settings.READ_CACHE_SECONDS  # noqa: E731 - read when kept (tests change it)
    return rowcopies.RowCopies(CHECKPOINT, max_entries=max_entries, seconds=seconds)


def answer_copies(
    max_entries: int,
    read: Callable[[set[int]], dict[int, Any]],
    *,
    max_bytes: int | None = None,
    size: Callable[[Any], int] = lambda value: 0,
) -> rowcopies.AnswerCopies:
    """Answers made of several startups, invalidated by the changes of theirs and of those
    that may join them (`read`: those startups read again, see `rowcopies.AnswerCopies`),
    at most `max_entries` of them and `max_bytes` of what `size` counts."""
    seconds = lambda: settings.READ_CACHE_SECONDS  # noqa: E731 - read when kept (tests change it)
    return rowcopies.AnswerCopies(
        CHECKPOINT,
        max_entries=max_entries,
        seconds=seconds,
        read=read,
        max_bytes=max_bytes,
        size=size,
    )


class LocalCache:
    """A bounded per-process map whose entries live while their kind's token is current."""

    instances: list["LocalCache"] = []

    def __init__(self, kind: Kind, *, max_entries: int):
        LocalCache.instances.append(self)
        self.kind = kind
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[str, float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The entry for `key` if still current, else `build()` (kept unless it is None)."""
        found, token = self.lookup([key])
        if key in found:
            return found[key]
        value = build()
        if value is not None and token is not None:
            self.put(key, value, token)
        return value

    def token(self) -> str | None:
        """The token to `put` entries under; read before the database, never after."""
        return current(self.kind) if enabled() else None

    def lookup(self, keys: list[Hashable]) -> tuple[dict, str | None]:
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


# Shared entries (Django's cache; Redis in production), keyed by a kind's token.


def shared_key(prefix: str, token: str | None, digest: str) -> str:
    """The cache key of a shared entry: under the kind's token when there is one, so a write
    anywhere starts new entries; without one ("-") entries only age out."""
    return f"{prefix}:{token or '-'}:{digest}"


def shared_get(key: str) -> Any:
    """The shared entry, or None (missing, or the cache is unreachable or its breaker open)."""
    return cache.get(key)


def shared_set(key: str, value: Any, seconds: int) -> None:
    cache.set(key, value, timeout=seconds)


def shared_add(key: str, value: Any, seconds: int) -> Any:
    """Store `value` unless another server stored one first; the entry every server serves."""
    if cache.add(key, value, timeout=seconds):
        return value
    return cache.get(key) or value


def wait_or_claim(
    claim: str, ready: Callable[[], Any], seconds: float, *, claim_seconds: int
) -> tuple[Any, bool]:
    """What `ready()` returns once another process has made it and shared it, else None and
    whether this process now holds `claim` (it makes the thing, then deletes the claim; a
    claim left behind ends after `claim_seconds`). While another process holds the claim,
    wait for its result for at most `seconds`; past that, or when the cache does not answer,
    make it here without a claim."""
    deadline = time.monotonic() + seconds
    while (found := ready()) is None:
        if cache.add(claim, 1, timeout=claim_seconds):
            if (found := ready()) is not None:  # shared just before the claim was free
                cache.delete(claim)
                return found, False
            return None, True
        if cache.get(claim) is None or time.monotonic() >= deadline:
            return None, False
        time.sleep(0.02)
    return found, False


# What else a process keeps beside LocalCache and row copies (the rank index copy), to forget
# with them.
_CLEARS: list[Callable[[], None]] = []


def on_clear(forget: Callable[[], None]) -> None:
    if forget not in _CLEARS:
        _CLEARS.append(forget)


def clear_local() -> None:
    """Forget this process's copies (tests: what a new token or expiry does)."""
    for local in LocalCache.instances:
        local.clear()
    CHECKPOINT.reset()
    for forget in _CLEARS:
        forget()
