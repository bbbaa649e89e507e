"""The read cache, in one place: its staleness rule, its stores and every invalidation.

One rule. Each kind of data ("auth": keys, accounts, subscriptions; "data": the startups) has
a random generation token kept in the database (`openstartup.models.Generation`). Every write
that changes a kind replaces its token in the same transaction (`bump`, called by the
receivers below and by the bulk paths that send no model signals). A request reads all tokens
in one small query the first time it needs one, and anything cached is used only under the
token it was built with. So every server answers alike from the moment a write commits, and
nothing the shared cache (Redis) does (paused, partitioned, restarted from an old snapshot,
failed over) can bring a revoked key or an old plan back: Redis never holds a token.

One exception, for speed: a request that needs only the data token (an anonymous one: a
cached `/api/ai` answer, a public page, MCP) takes it from this process's watch instead
(core/tokenwatch.py, PostgreSQL's LISTEN/NOTIFY), so a cached answer sends no query.
Other servers' writes show there within milliseconds, never later than the watch's
MAX_LAG_SECONDS (1 s) when the watch is cut off. The "auth" token (keys, plans) is always read.

The token is read before the rows a copy is built from, so a copy can only be older than its
token, never newer: a write that commits between the two replaced the token, and the copy is
never served. Rows that fill a copy are read from the primary (`.using("default")` in the
builders), never from a replica that may not have replayed the write yet.

Two stores, one key scheme:
- per-process copies (`LocalCache`): key records, profile JSON, list rows, AI answers;
- shared entries in Django's cache (`shared_get` / `shared_set`): list page skeletons and AI
  answers, keyed by the token, so another server's fill is reused and a write starts afresh.
  Redis failures open a circuit breaker (core/cachebreaker.py): for a few seconds no
  request waits on Redis, and the database answers; correctness never depends on Redis.

`READ_CACHE_SECONDS` (0 = off) bounds a copy's life and turns per-process copies on or off.
"""

import hashlib
import logging
import secrets
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from dataclasses import asdict
from functools import partial
from typing import Any, Literal

import orjson
from django.conf import settings
from django.core import signals as core_signals
from django.core.cache import cache, caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import InterfaceError, OperationalError, transaction
from django.db import connections as db_connections
from django.db.models import QuerySet, Subquery
from django.db.models.base import ModelState
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.http import HttpRequest

from accounts.models import User
from apikeys.models import ApiKey, Subscription
from core import dbdeadline, rowcopies, tokenwatch
from core.formats import site_url
from core.postgresql import prepared_rows
from core.renderers import CamelCaseJSONRenderer, JSONRenderer
from openstartup.models import GENERATION_TOKENS_SQL, Generation, generation_tokens
from startups import rankindex, selectors
from startups.freshness import freshness_epoch
from startups.models import (
    Change,
    Founder,
    MonthlyRevenue,
    RevenueSnapshot,
    Social,
    Startup,
    Verification,
)
from startups.selectors import After, StartupFilters, StartupPage, encode_cursor, startup_get
from startups.serializers import StartupDetailSerializer
from verification.models import ProviderConnection

logger = logging.getLogger(__name__)

Kind = Literal["auth", "data"]
KINDS: tuple[Kind, ...] = ("auth", "data")
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


def _new_token() -> str:
    return secrets.token_hex(8)


def _read_tokens() -> dict[str, str]:
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
        return _read_tokens().get(kind)
    if kind in tokens:
        return tokens[kind]
    if kind == "data" and (watched := _watched_data_token()) is not None:
        tokens["data"] = watched
        return watched
    # One query for every kind; a data token the request already holds stays.
    tokens.update({**_read_tokens(), **tokens})
    return tokens.get(kind)


TOKEN_WATCH = tokenwatch.TokenWatch(PRIMARY, generation_tokens)


def _watched_data_token() -> str | None:
    """The data token as this process's watch holds it, where a lag of milliseconds is
    harmless: only the data token (a revoked key or a changed plan is always read from the
    database), never inside a transaction (which must see its own writes), and only while
    the watch is confirmed (core/tokenwatch.py)."""
    if db_connections[PRIMARY].in_atomic_block or not tokenwatch.available(PRIMARY):
        return None
    return (TOKEN_WATCH.tokens() or {}).get("data")


def bump(kind: Kind, token: str | None = None) -> None:
    """Mark everything cached of `kind` stale on every server. The new token is written in
    the current transaction, so it becomes current exactly when the write does (and a write
    rolled back leaves the old token, under which nothing of it was ever kept). A data token
    without a `token` given starts a new epoch: every per-startup copy is dropped too; the
    change service gives `<epoch>.<sequence>` (core/rowcopies.py)."""
    token = token or _new_token()
    if not Generation.objects.using(PRIMARY).filter(kind=kind).update(token=token):
        Generation.objects.using(PRIMARY).bulk_create(
            [Generation(kind=kind, token=token)], ignore_conflicts=True
        )
        Generation.objects.using(PRIMARY).filter(kind=kind).update(token=token)
    if db_connections[PRIMARY].vendor == "postgresql":
        # Delivered to every watching process when this transaction commits.
        with db_connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [tokenwatch.CHANNEL, kind])
    transaction.on_commit(partial(TOKEN_WATCH.saw, kind, token), using=PRIMARY)
    tokens = _request_tokens.get()
    if tokens is not None:
        tokens.clear()  # read again (this request may fill copies after its own write)


def data_epoch_for_update() -> str | None:
    """The epoch of the current data token, its row locked until the transaction ends (the
    change service then writes `<epoch>.<sequence>`: the lock orders it after any other
    write of the token in flight; taken before the sequence's own lock, as `bump` is)."""
    row = (
        Generation.objects.using(PRIMARY)
        .select_for_update()
        .filter(kind="data")
        .values_list("token", flat=True)
        .first()
    )
    return rowcopies.parse(row)[0]


def _changed(after: int, upto: int) -> list[tuple[int, int]]:
    """(startup id, sequence) of the Change rows in (after, upto], from the primary."""
    rows = Change.objects.using(PRIMARY).filter(id__gt=after, id__lte=upto)
    return list(rows.values_list("startup_id", "id"))


# This process's last applied change sequence (per-startup copies drop only what changed).
CHECKPOINT = rowcopies.Checkpoint(_changed)


def row_stamp() -> rowcopies.Stamp | None:
    """The stamp to look up and keep per-startup copies under (read before the database)."""
    return CHECKPOINT.stamp(current("data")) if enabled() else None


def _row_copies(max_entries: int) -> rowcopies.RowCopies:
    seconds = lambda: settings.READ_CACHE_SECONDS  # noqa: E731 - read when kept (tests change it)
    return rowcopies.RowCopies(CHECKPOINT, max_entries=max_entries, seconds=seconds)


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


# Invalidation: every write that changes what a kind holds replaces its token. Saves through
# the ORM are caught here; bulk paths that skip model signals (the demo seed, imports, provider
# syncs, admin deletions) call `bump` themselves. No startups delete receiver is connected on
# purpose: one would stop Django from deleting large querysets in bulk.


def saves_only_last_login(update_fields: Any) -> bool:
    """Whether a post_save is a sign-in stamping `last_login`: it changes nothing any copy
    holds, so receivers skip it (a dashboard sign-in would otherwise drop every copy)."""
    return update_fields is not None and set(update_fields) <= {"last_login"}


def flush_auth(sender: type, update_fields=None, created=False, **kwargs: Any) -> None:
    """Key, subscription and account changes: key records are stale everywhere."""
    if sender is ApiKey and created:
        return  # a new key was never looked up, so no copy of it exists
    if sender is User and (created or saves_only_last_login(update_fields)):
        return  # a new account has no keys yet; a sign-in changes nothing a lookup reads
    bump("auth")


def flush_data(sender: type, update_fields=None, created=False, **kwargs: Any) -> None:
    """Writes that change what the startups' surfaces show (an owner's verification shows on
    their startups, hence User): profiles, list pages and AI answers are stale everywhere."""
    if sender is User and (created or saves_only_last_login(update_fields)):
        return  # a new account owns nothing yet; a sign-in changes nothing shown
    bump("data")


# What each kind's copies are made from: a save of one of these (for the auth models, a
# deletion too) replaces the kind's token. A failed sync saves its ProviderConnection and
# nothing else: the `status` every surface shows changes.
AUTH_MODELS = (ApiKey, Subscription, User)
# The data: the startups' own tables (also what a bulk load writes: demo/seed.py) and, as
# an owner's verification shows on their startups, the accounts.
STARTUP_MODELS = (
    Startup,
    Founder,
    Social,
    Verification,
    MonthlyRevenue,
    RevenueSnapshot,
    ProviderConnection,
)
DATA_MODELS = (*STARTUP_MODELS, User)


def _connect_flushes() -> None:
    for model in AUTH_MODELS:
        uid = f"readcache-auth-{model.__name__}"
        post_save.connect(flush_auth, sender=model, dispatch_uid=uid)
        post_delete.connect(flush_auth, sender=model, dispatch_uid=f"{uid}-deleted")
    for model in DATA_MODELS:
        post_save.connect(flush_data, sender=model, dispatch_uid=f"readcache-data-{model.__name__}")


_connect_flushes()


# The cached reads. Each keeps its per-process copies here; the queries are plain selectors,
# pointed at the primary when they fill a copy.

# Key records (apikeys/services.py builds them): one query per key, or none while current.
KEY_RECORDS = LocalCache("auth", max_entries=10_000)


def key_record(digest: str, build: Callable[[], Any]) -> Any:
    """The key record for `digest` (None: no such active key), from a current copy or
    `build()`, which must read the primary."""
    return KEY_RECORDS.get_or_build(digest, build)


# The REST detail document of a startup, rendered once: camelCase JSON bytes of `data`; a
# copy lives until its startup changes (or a write the change sequence does not itemise).
PROFILES = _row_copies(5_000)


def startup_profile_json(*, slug: str, request: HttpRequest) -> bytes | None:
    """The `data` object of /api/v1/startups/{slug} as JSON bytes, or None when there is no
    such published startup. Links in it are absolute, so copies are kept per site address."""

    # Keyed by the minute too: the verification `status` turns `stale` with time alone.
    key = (site_url(request), slug, freshness_epoch())
    stamp = row_stamp()
    if (found := PROFILES.lookup([key], stamp).get(key)) is not None:
        return found
    startup = startup_get(slug=slug, db=PRIMARY)
    if startup is None:
        return None
    data = StartupDetailSerializer(startup, context={"request": request}).data
    body = CamelCaseJSONRenderer().render(data)
    PROFILES.put(key, body, startup.pk, stamp)
    return body


# List pages: the expensive parts (exact total, which startups are on the page, their ranks)
# as a "skeleton" per filter set and page: a per-process copy, and for pages SQL had to answer
# a shared entry for LIST_CACHE_SECONDS at most (0: off); the rows as per-process copies by id.
LIST_CACHE_VERSION = "list-v3"
LIST_ROWS = _row_copies(20_000)
SKELETONS = LocalCache("data", max_entries=5_000)


class _RankIndexCopy:
    """This process's `RankIndex` (startups/rankindex.py) and the data token it was built
    under. A small dataset rebuilds it in the request that finds it stale; a dataset of more
    than RANK_INDEX_INLINE_STARTUPS, or once a build took longer than
    RANK_INDEX_INLINE_SECONDS, builds in a background thread (one at a time, at most one per
    RANK_INDEX_REBUILD_SECONDS) while the SQL path answers."""

    def __init__(self) -> None:
        # (token, index) as one value: a background build replaces both at once, so a reader
        # never pairs one build's index with another's token.
        self.built: tuple[str, rankindex.RankIndex] | None = None
        self.build_seconds = 0.0
        self.large: bool | None = None  # more than RANK_INDEX_INLINE_STARTUPS (None: unknown)
        self.started = float("-inf")
        self.building = False
        self.lock = threading.Lock()
        self.moving = threading.Lock()  # one thread applies changes; the others wait for it
        self.uncarried: str | None = None  # the token of a build no change may carry on

    @property
    def index(self) -> rankindex.RankIndex | None:
        return None if self.built is None else self.built[1]

    def current(self) -> tuple[str, rankindex.RankIndex] | None:
        """(token, index) when an index of the current data is ready, else None (a build
        starts, inline or in the background, as the dataset allows)."""
        token = current("data") if enabled() else None
        if token is None:
            return None
        if (built := self.built) is not None and built[0] == token:
            return built
        if built is not None and (carried := self._carried(token)) is not False:
            return None if carried is True else carried
        if self.large is None:  # before the first build: how big?
            size = rankindex.estimated_size(db=PRIMARY)
            self.large = size > settings.RANK_INDEX_INLINE_STARTUPS
        if self.inline():
            self._build(token)
            built = self.built
            return built if built is not None and built[0] == token else None
        with self.lock:
            due = time.monotonic() - self.started >= settings.RANK_INDEX_REBUILD_SECONDS
            if self.building or not due:
                return None
            self.building, self.started = True, time.monotonic()
        threading.Thread(target=self._build_in_background, daemon=True).start()
        return None

    def _carried(self, token: str) -> tuple | bool:
        """The index moved on (startups/rankindex.py `follow`) to the newest data token, one
        thread at a time: (token, index) when that is `token`; True when the index is newer
        than `token` (the SQL path answers this request); False: build anew."""
        with self.moving:
            if (built := self.built) is not None and built[0] == token:
                return built
            if built is None or self.uncarried == built[0]:
                return False
            newest = _read_tokens().get("data") or token
            index = rankindex.follow(built[1], since=built[0], to=newest, db=PRIMARY)
            if index is None:
                self.uncarried = built[0]  # no later token helps: build anew
                return False
            if index is not built[1] and _read_tokens().get("data") != newest:
                return True  # a write committed meanwhile: the rows read may be newer
            with self.lock:
                if self.built is built:  # never over a build that replaced it meanwhile
                    self.built = (newest, index)
            return self.built if self.built[0] == token else True

    def inline(self) -> bool:
        """Whether work for the index is done in the request (small, quick datasets)."""
        return not self.large and self.build_seconds <= settings.RANK_INDEX_INLINE_SECONDS

    def _build(self, token: str, *, wait: bool = False) -> None:
        started = time.monotonic()
        index, claimed = _shared_index(token, wait=wait)
        if index is None:
            try:
                index = rankindex.build(db=PRIMARY)  # read after the token: never newer
            finally:
                if claimed:  # others may be waiting for this build: not any more
                    cache.delete(_build_claim(token))
            if _read_tokens().get("data") == token:  # never replace a newer shared build
                _share_index(token, index)
            # Only a build from the database says how long this dataset takes to build.
            self.build_seconds = time.monotonic() - started
        with self.lock:
            self.built = (token, index)

    def _build_in_background(self) -> None:
        try:
            self._build(_read_tokens()["data"], wait=True)
        except Exception:  # noqa: BLE001 - SQL answers meanwhile; a later request retries
            logger.exception("building the rank index failed")
        finally:
            self.building = False
            db_connections.close_all()  # this thread's own connection

    def clear(self) -> None:
        with self.lock:
            self.built = self.large = self.uncarried = None
            self.build_seconds, self.started = 0.0, float("-inf")


RANK_INDEX = _RankIndexCopy()


# Shared between processes through the cache (Redis): the last rank index built (one entry,
# with the token it was built under) and each build's term places. Another worker, or one
# that GUNICORN_MAX_REQUESTS recycled, loads them in milliseconds instead of reading every
# startup (seconds at 1,000,000). A token in the entry, never a trusted one: the entry is used
# only under the token this process has just read from the database.
RANK_INDEX_KEY = "rank-index-v1"
RANK_TERMS_VERSION = "rank-terms-v1"
# How long a background build waits for another process's build of the same data (and work
# outside a request for another's search of a term).
RANK_INDEX_WAIT_SECONDS = 30
# What a request keeps of its database deadline when it waits for another's search of its
# term: enough for its page's rows, or for the SQL path if the search is not done by then.
TERM_WAIT_MARGIN_SECONDS = 1.0


def _term_wait_seconds() -> float:
    """How long this request may wait for another's search of its term."""
    left = dbdeadline.remaining()
    return RANK_INDEX_WAIT_SECONDS if left is None else max(0.0, left - TERM_WAIT_MARGIN_SECONDS)


def _shares_rank_index() -> bool:
    """Whether the cache reaches other processes (a per-process cache would only hold a
    second copy of the index)."""
    shared = not isinstance(caches["default"], LocMemCache | DummyCache)
    return shared and settings.RANK_INDEX_SHARED_SECONDS > 0


def _wait_or_claim(claim: str, ready: Callable[[], Any], seconds: float) -> tuple[Any, bool]:
    """What `ready()` returns once another process has made it and shared it, else None and
    whether this process now holds `claim` (it makes the thing, then deletes the claim).
    While another process holds the claim, wait for its result for at most `seconds`; past
    that, or when the cache does not answer, make it here without a claim."""
    deadline = time.monotonic() + seconds
    while (found := ready()) is None:
        if cache.add(claim, 1, timeout=RANK_INDEX_WAIT_SECONDS):
            if (found := ready()) is not None:  # shared just before the claim was free
                cache.delete(claim)
                return found, False
            return None, True
        if cache.get(claim) is None or time.monotonic() >= deadline:
            return None, False
        time.sleep(0.02)
    return found, False


def _shared_index(token: str, *, wait: bool) -> tuple[rankindex.RankIndex | None, bool]:
    """The index another process built under `token` (None: build it here), and whether this
    process holds the build's claim. With `wait`, while another process builds it, wait for
    its result (RANK_INDEX_WAIT_SECONDS at most) instead of reading every startup a second
    time. Waiting polls the small token entry; the index is read once its token matches."""
    if not _shares_rank_index():
        return None, False

    def ready() -> rankindex.RankIndex | None:
        if shared_get(f"{RANK_INDEX_KEY}:token") != token:
            return None
        found = shared_get(RANK_INDEX_KEY)
        if found is None or found[0] != token:
            return None
        try:
            return rankindex.RankIndex.from_shared_form(found[1])
        except Exception:  # noqa: BLE001 - another version's shape: build it here
            logger.exception("the shared rank index could not be read")
            return None

    return _wait_or_claim(_build_claim(token), ready, RANK_INDEX_WAIT_SECONDS if wait else 0)


def _build_claim(token: str) -> str:
    """The key a process holds while it builds the index of `token` for every process."""
    return f"{RANK_INDEX_KEY}:building:{token}"


def _share_index(token: str, index: rankindex.RankIndex) -> None:
    if _shares_rank_index():
        seconds = settings.RANK_INDEX_SHARED_SECONDS
        shared_set(RANK_INDEX_KEY, (token, index.shared_form()), seconds)
        shared_set(f"{RANK_INDEX_KEY}:token", token, seconds)  # after the entry it names


def _term_key(index: rankindex.RankIndex, term: str) -> str:
    digest = hashlib.sha256(term.encode()).hexdigest()
    return shared_key(RANK_TERMS_VERSION, index.build_id, digest)


def _shared_term(index: rankindex.RankIndex, term: str) -> array | None:
    """`term`'s places as another process holding this same build fetched them, kept here."""
    if not _shares_rank_index():
        return None
    places = shared_get(_term_key(index, term))
    if places is not None:
        index.keep_term(term, places)
    return places


def _share_term(index: rankindex.RankIndex, term: str, places: array) -> None:
    """Share the places of `term` this process fetched (call once the data token is known to
    be unchanged since: they are then exact for this build)."""
    if _shares_rank_index():
        shared_set(_term_key(index, term), places, settings.RANK_INDEX_SHARED_SECONDS)


# The terms this process is fetching: (build, term) -> set when the fetch has ended.
_TERM_FETCHES: dict[tuple[str, str], threading.Event] = {}
_TERM_FETCHES_LOCK = threading.Lock()


def _term_places(index: rankindex.RankIndex, token: str, term: str) -> array | None:
    """`term`'s places in this build; None: the SQL path answers (the data changed during
    the search, or the search another request of this process runs took longer than this
    one may wait).

    A term is searched once per build: kept here, or shared by another process holding the
    same build, or fetched by one query, which the other requests asking it meanwhile wait
    for (in this process, and with Redis in the others too) instead of each answering
    through the SQL path, whose COUNT and window read the same rows and more. A request
    waits at most until a second before its database deadline."""
    if (places := index.cached_term(term)) is not None:
        return places
    key = (index.build_id, term)
    with _TERM_FETCHES_LOCK:
        running = _TERM_FETCHES.get(key)
        if running is None:
            _TERM_FETCHES[key] = threading.Event()
    if running is not None:
        running.wait(timeout=_term_wait_seconds())
        return index.cached_term(term)
    claimed = False
    try:
        if _shares_rank_index():
            claim = _term_key(index, term) + ":fetching"
            shared, claimed = _wait_or_claim(
                claim, partial(_shared_term, index, term), _term_wait_seconds()
            )
            if shared is not None:
                return shared
        places = index.fetch_term(term, db=PRIMARY)
        if _read_tokens().get("data") != token:
            return None  # a write committed meanwhile: the places may be newer than the index
        index.keep_term(term, places)
        _share_term(index, term, places)
        return places
    finally:
        if claimed:
            cache.delete(claim)  # shared or given up: nobody waits for this search any more
        with _TERM_FETCHES_LOCK:
            _TERM_FETCHES.pop(key).set()


def _page_from_index(
    index: rankindex.RankIndex,
    token: str,
    *,
    filters: StartupFilters,
    offset: int,
    limit: int,
    after: After | None,
) -> StartupPage | None:
    """The page with its total and ranks from the rank index built under the data `token`:
    SQL only for the ids of a page in another order than the default one or after a cursor
    (index walks) and for the rows. None when the index cannot answer (then the SQL path
    does)."""
    if filters.q and not filters.category and _term_places(index, token, filters.q) is None:
        return None
    asked_sql = False
    subsets = index.subsets(filters, db=PRIMARY)
    if subsets is False:
        return None
    total = index.total(filters, subsets)
    more, seen = None, None  # seen: the data token the page's ids were read under
    if after is not None and limit <= 0:
        ids, more = [], False
    elif after is not None and filters.sort == selectors.DEFAULT_SORT:
        place = index.after_place(after, db=PRIMARY)
        ids = index.default_order_ids(filters, subsets, 0, limit + 1, start=place)
        more, ids, asked_sql = len(ids) > limit, ids[:limit], True
    elif after is not None:
        ordered = selectors.startups_after(
            selectors.startup_list(filters=filters).using(PRIMARY), after
        )
        ids, seen = _ids_with_token(ordered, 0, limit + 1)
        more, ids, asked_sql = len(ids) > limit, ids[:limit], True
    elif limit <= 0 or offset >= total:
        return StartupPage(startups=[], total=total)
    elif (walked := index.page_ids(filters, subsets, offset, limit)) is not None:
        ids = walked
    else:  # an order the index does not hold: its b-tree walked in SQL for the page's ids
        ordered = selectors.startup_list(filters=filters).using(PRIMARY)
        ids, seen = _ids_with_token(ordered, offset, offset + limit)
        asked_sql = True
    if asked_sql and (seen or _read_tokens().get("data")) != token:
        return None  # a write committed meanwhile: the ids may be newer than the index
    ranks = index.ranks(filters, subsets, ids)
    startups = _ranked_rows(ids, [ranks[startup_id] for startup_id in ids])
    return StartupPage(startups=startups, total=total, more=more)


def _ids_with_token(ordered: QuerySet, start: int, stop: int) -> tuple[list[int], str | None]:
    """The ids of `ordered[start:stop]` and the data token, read by one statement, so from
    one snapshot: the ids are of the data that token names (a second query for the token
    was a second round trip on every page in another order than the default one). None for
    the token when the slice is empty."""
    token = Generation.objects.filter(kind="data").values("token")[:1]
    rows = ordered.annotate(data_token=Subquery(token)).values_list("id", "data_token")
    found = list(rows[start:stop])
    return [startup_id for startup_id, _ in found], (found[0][1] if found else None)


def _ranked_rows(ids: list[int], ranks: list[int | None]) -> list[Startup]:
    """The list rows of `ids` with their ranks, from the per-process copies or one query by
    primary key for the missing ones; a startup unpublished since is left out."""
    stamp = row_stamp() if ids else None
    rows = LIST_ROWS.lookup(ids, stamp)
    missing = [startup_id for startup_id in ids if startup_id not in rows]
    if missing:
        for startup_id, startup in selectors.list_rows(missing, db=PRIMARY).items():
            rows[startup_id] = kept = _kept_row(startup)
            LIST_ROWS.put(startup_id, kept, startup_id, stamp)
    startups = []
    for startup_id, rank in zip(ids, ranks, strict=True):
        if (kept := rows.get(startup_id)) is not None:
            startups.append(_row(kept, rank))
    return startups


# One tuple of attribute names per shape of kept row (list columns, or every column).
_ROW_SHAPES: dict[tuple, tuple] = {}


def _kept_row(startup: Startup) -> tuple[tuple, tuple]:
    """A list row as kept: its attribute names and values as two tuples of plain values.
    Tuples of strings, numbers and dates are not tracked by the garbage collector, so
    20,000 kept rows cost full collections nothing (as model instances they were some 80,000
    tracked objects that every full collection walked: pauses up to 90 ms)."""
    values = {k: v for k, v in startup.__dict__.items() if k not in ("_state", "rank")}
    names = tuple(values)
    return _ROW_SHAPES.setdefault(names, names), tuple(values.values())


def _row(kept: tuple[tuple, tuple], rank: int | None) -> Startup:
    """A model instance of a kept row with this page's rank (its own `_state`: nothing is
    shared between pages or threads but the immutable values)."""
    names, values = kept
    startup = Startup.__new__(Startup)
    startup.__dict__.update(zip(names, values, strict=True))
    startup._state = ModelState()
    startup._state.db, startup._state.adding = PRIMARY, False
    startup.rank = rank
    return startup


def _sql_page(
    *, filters: StartupFilters, offset: int, limit: int, after: After | None
) -> StartupPage:
    """`selectors.startup_page` read from the primary, its rows kept as copies."""
    stamp = row_stamp()  # before the rows are read
    page = selectors.startup_page(
        filters=filters, offset=offset, limit=limit, after=after, db=PRIMARY
    )
    for startup in page.startups:
        LIST_ROWS.put(startup.id, _kept_row(startup), startup.id, stamp)
    return page


def _skeleton(page: StartupPage) -> dict:
    # Tuples: not tracked by the garbage collector once kept (see _kept_row).
    return {
        "total": page.total,
        "ids": tuple(startup.id for startup in page.startups),
        "ranks": tuple(startup.rank for startup in page.startups),
        "more": page.more,
    }


def startup_page(
    *, filters: StartupFilters, offset: int, limit: int, after: After | None = None
) -> StartupPage:
    """`startups.selectors.startup_page`, kept: a write anywhere starts afresh (the token is
    read before the database, for the skeleton and the rows alike). First a per-process
    skeleton copy, then the rank index (cheaper than a round trip to the shared cache), then
    the shared skeleton, then SQL, whose skeleton alone is shared."""
    seconds = settings.LIST_CACHE_SECONDS
    position = encode_cursor(after) if after else None
    identity = orjson.dumps(
        {**asdict(filters), "offset": offset, "limit": limit, "after": position}
    )
    found, token = SKELETONS.lookup([identity]) if seconds > 0 else ({}, SKELETONS.token())
    skeleton, page = found.get(identity), None
    if skeleton is None and rankindex.answers(filters) and (built := RANK_INDEX.current()):
        index_token, index = built
        page = _page_from_index(
            index, index_token, filters=filters, offset=offset, limit=limit, after=after
        )
    if skeleton is None and page is None:
        key = shared_key(LIST_CACHE_VERSION, token, hashlib.sha256(identity).hexdigest())
        skeleton = shared_get(key) if seconds > 0 else None
        if skeleton is None:
            page = _sql_page(filters=filters, offset=offset, limit=limit, after=after)
            if seconds > 0:
                shared_set(key, _skeleton(page), seconds)
    if page is not None:
        if seconds > 0 and token is not None:
            SKELETONS.put(identity, _skeleton(page), token)
        return page
    if token is not None and not found:
        SKELETONS.put(identity, skeleton, token)
    startups = _ranked_rows(skeleton["ids"], skeleton["ranks"])
    return StartupPage(startups=startups, total=skeleton["total"], more=skeleton["more"])


# /api/ai answers: the rendered JSON bytes every caller gets (never anything per caller), under
# the data token, so a write shows on /api/ai at the same moment as on /api/v1 and MCP. Entries
# also end after AI_CACHE_SECONDS, for what changes with time alone (an add-on expiring).
AI_CACHE_VERSION = "ai-v3"
_AI_ANSWERS = LocalCache("data", max_entries=1_000)


def ai_answer(*, identity: dict, build: Callable[[], Any]) -> dict:
    """{"body": JSON bytes, "etag": strong validator, "built": epoch seconds} for the answer
    named by `identity` (site, path and filters; or site, MCP tool and arguments), built by
    `build` on a miss (read the primary); what `build` raises is never kept."""
    seconds = settings.AI_CACHE_SECONDS
    raw = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS, default=str)
    found, token = _AI_ANSWERS.lookup([raw])
    entry = found.get(raw)
    now = time.time()
    if entry is not None and entry["built"] + seconds > now:
        return entry
    key = shared_key(AI_CACHE_VERSION, token, hashlib.sha256(raw).hexdigest())
    entry = shared_get(key)
    if entry is None:
        body = JSONRenderer().render(build())
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
        entry = shared_add(key, {"body": body, "etag": etag, "built": now}, seconds)
    if token is not None:
        _AI_ANSWERS.put(raw, entry, token)
    return entry


def clear_local() -> None:
    """Forget this process's copies (tests: what a new token or expiry does)."""
    for local in LocalCache.instances:
        local.clear()
    CHECKPOINT.reset()
    RANK_INDEX.clear()
