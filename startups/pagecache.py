"""List pages, kept: the rank index copy and the page assembly of /api/v1/startups (and of
the public list page), on the read cache's mechanism (core/readcache.py).

A list page's expensive parts (exact total, which startups are on the page, their ranks) are
kept as a "skeleton" per filter set and page; its rows as per-startup copies by id, their sync
time read beside them (startups/freshness.py `FRESHNESS`: a sync may stamp it with no Change
row). The rank index (startups/rankindex.py) answers totals and ranks by binary search; this
process keeps one under the data token and shares it through the cache (Redis) with the
others.
"""

import hashlib
import logging
import threading
import time
from array import array
from contextlib import ExitStack
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from functools import partial

import orjson
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import connections as db_connections
from django.db.models import QuerySet, Subquery
from django.db.models.base import ModelState

from core import dbdeadline, readcache, rowcopies
from core.models import Generation
from startups import listsql, rankindex, rankmoves, selectors
from startups.freshness import FRESHNESS, NOT_READ
from startups.models import Startup
from startups.selectors import After, StartupFilters, StartupPage, encode_cursor

logger = logging.getLogger(__name__)

# List pages: the expensive parts (exact total, which startups are on the page, their ranks)
# as a "skeleton" per filter set and page: a per-process copy, and for pages SQL had to answer
# a shared entry for LIST_CACHE_SECONDS at most (0: off); the rows as per-process copies by id.
LIST_CACHE_VERSION = "list-v4"
LIST_ROWS = readcache.row_copies(20_000)
SKELETONS = readcache.LocalCache("data", max_entries=5_000)


# `_RankIndexCopy.reach`'s answer when writes overtook every move of the index it tried.
OVERTAKEN = "overtaken"


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

    def current(self, newer: str | None = None) -> tuple[str, rankindex.RankIndex] | None:
        """(token, index) when an index of the current data is ready, else None (a build
        starts, inline or in the background, as the dataset allows). The index is of the
        request's data token or of a newer one; `newer`: a data token the request has since
        seen in the database (a write committed while it read), which the index must reach."""
        found = self.reach(newer)
        return None if found is OVERTAKEN else found

    def reach(self, newer: str | None = None) -> "tuple[str, rankindex.RankIndex] | None | str":
        """`current`, telling apart with OVERTAKEN an index whose every move a write overtook
        (`_carried`) from one not ready (None)."""
        token = newer or (readcache.current("data") if readcache.enabled() else None)
        if token is None:
            return None
        if (built := self.built) is not None and built[0] == token:
            return built
        if built is not None and (carried := self._carried(token)) is not False:
            return OVERTAKEN if carried is True else carried
        if self.large is None:  # before the first build: how big?
            size = rankindex.estimated_size(db=readcache.fill_db())
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
        """The index moved on (startups/rankmoves.py `follow`) to the newest data token, one
        thread at a time: (token, index) at `token` or at the newest one (read after `token`,
        so never older); True when a write committed during each of its INDEX_ATTEMPTS moves
        (the rows it read may be newer than that token); False: build anew. The changes are
        read from the primary: the newest token may be past what a replica has replayed."""
        with self.moving:
            if (built := self.built) is not None and built[0] == token:
                return built
            if built is None or self.uncarried == built[0]:
                return False
            newest = readcache.read_tokens().get("data") or token
            for _ in range(INDEX_ATTEMPTS):  # writes may keep committing while it moves
                index = rankmoves.follow(built[1], since=built[0], to=newest, db=readcache.PRIMARY)
                if index is None:
                    self.uncarried = built[0]  # no later token helps: build anew
                    return False
                now = readcache.read_tokens().get("data") or token
                if index is built[1] or now == newest:
                    break
                newest = now  # a write committed meanwhile: the rows read may be newer
            else:
                return True
            with self.lock:
                if self.built is built:  # never over a build that replaced it meanwhile
                    self.built = (newest, index)
            return self.built if self.built[0] in (token, newest) else True

    def at(self, token: str, *, db: str) -> tuple[str, rankindex.RankIndex] | None:
        """Inside a read snapshot of `db` whose data token is `token` (readcache.snapshot),
        holding `moving` (taken before the snapshot opened: `_snapshot_found`): the index at
        `token`, moved on to it through that snapshot when it is older (the changes and the
        changed startups are read at `token` exactly: no write can overtake the move); the
        index at a newer token when another request has moved it past (the caller reads
        again in a newer snapshot); None when it cannot reach `token` (none built, another
        epoch, too much changed: `current` builds)."""
        built = self.built
        if built is None or built[0] == token or _reaches(token, built[0]):
            return built
        if not _reaches(built[0], token) or self.uncarried == built[0]:
            return None
        index = rankmoves.follow(built[1], since=built[0], to=token, db=db)
        if index is None:
            self.uncarried = built[0]
            return None
        with self.lock:
            if self.built is built:  # never over a build that replaced it meanwhile
                self.built = (token, index)
        return token, index

    def inline(self) -> bool:
        """Whether work for the index is done in the request (small, quick datasets)."""
        return not self.large and self.build_seconds <= settings.RANK_INDEX_INLINE_SECONDS

    def _build(self, token: str, *, wait: bool = False) -> None:
        started = time.monotonic()
        index, claimed = _shared_index(token, wait=wait)
        if index is None:
            try:
                index = rankindex.build(db=readcache.fill_db())  # read after the token: never newer
            finally:
                if claimed:  # others may be waiting for this build: not any more
                    cache.delete(_build_claim(token))
            if readcache.read_tokens().get("data") == token:  # never replace a newer shared build
                _share_index(token, index)
            # Only a build from the database says how long this dataset takes to build.
            self.build_seconds = time.monotonic() - started
        with self.lock:
            self.built = (token, index)

    def _build_in_background(self) -> None:
        try:
            self._build(readcache.read_tokens()["data"], wait=True)
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
# only under the token this process has just read from the database. The payload carries its
# format (rankindex.SHARED_FORMAT): a process of another version builds its own instead.
RANK_INDEX_KEY = "rank-index-v2"
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


def _shared_index(token: str, *, wait: bool) -> tuple[rankindex.RankIndex | None, bool]:
    """The index another process built under `token`, or under an older token of the same
    epoch and moved on here by the changes since (None: build it here), and whether this
    process holds the build's claim. With `wait`, while another process builds it, wait for
    its result (RANK_INDEX_WAIT_SECONDS at most) instead of reading every startup a second
    time. Waiting polls the small token entry; the index is read once its token matches.

    A worker that starts while writes go on (a new one, or one GUNICORN_MAX_REQUESTS
    recycled) never finds the shared build under the token it reads: it takes the last one
    and moves it (milliseconds) rather than reading every startup (seconds at 1,000,000);
    its copy keeps the shared build's name as its root, so the terms' places it and the
    other workers fetch are shared between them (rankmoves.moved_build_id)."""
    if not _shares_rank_index():
        return None, False
    tried: set[str] = set()  # older builds tried once: waiting polls for this token's

    def ready() -> rankindex.RankIndex | None:
        shared = readcache.shared_get(f"{RANK_INDEX_KEY}:token")
        if shared is None or shared in tried or not _reaches(shared, token):
            return None
        found = readcache.shared_get(RANK_INDEX_KEY)
        if found is None or found[0] != shared:
            return None
        try:
            index = rankindex.RankIndex.from_shared_form(found[1])
        except Exception:  # noqa: BLE001 - a payload it cannot read: build it here
            logger.exception("the shared rank index could not be read")
            return None
        if index is None:
            logger.warning("the shared rank index is of another format: building it here")
        if index is None or shared == token:
            return index
        tried.add(shared)
        moved = rankmoves.follow(index, since=shared, to=token, db=readcache.PRIMARY)
        if moved is not None and moved is not index:
            # The changed startups were read as the database has them now: kept only if no
            # write came after `token` meanwhile.
            moved = moved if readcache.read_tokens().get("data") == token else None
        return moved

    seconds = RANK_INDEX_WAIT_SECONDS if wait else 0
    claim = _build_claim(token)
    return readcache.wait_or_claim(claim, ready, seconds, claim_seconds=RANK_INDEX_WAIT_SECONDS)


def _reaches(older: str, token: str) -> bool:
    """Whether the change sequence leads from the data token `older` to `token` (the same
    epoch, no later)."""
    (epoch, start), (new_epoch, end) = rowcopies.parse(older), rowcopies.parse(token)
    return older == token or (epoch == new_epoch and None not in (start, end) and start <= end)


def _build_claim(token: str) -> str:
    """The key a process holds while it builds the index of `token` for every process."""
    return f"{RANK_INDEX_KEY}:building:{token}"


def _share_index(token: str, index: rankindex.RankIndex) -> None:
    if _shares_rank_index():
        seconds = settings.RANK_INDEX_SHARED_SECONDS
        readcache.shared_set(RANK_INDEX_KEY, (token, index.shared_form()), seconds)
        readcache.shared_set(f"{RANK_INDEX_KEY}:token", token, seconds)  # after the entry it names


def _term_key(index: rankindex.RankIndex, term: str) -> str:
    digest = hashlib.sha256(term.encode()).hexdigest()
    return readcache.shared_key(RANK_TERMS_VERSION, index.build_id, digest)


def _shared_term(index: rankindex.RankIndex, term: str) -> array | None:
    """`term`'s places as another process holding this same build fetched them, kept here."""
    if not _shares_rank_index():
        return None
    places = readcache.shared_get(_term_key(index, term))
    if places is not None:
        index.keep_term(term, places)
    return places


def _share_term(index: rankindex.RankIndex, term: str, places: array) -> None:
    """Share the places of `term` this process fetched (call once the data token is known to
    be unchanged since: they are then exact for this build)."""
    if _shares_rank_index():
        readcache.shared_set(_term_key(index, term), places, settings.RANK_INDEX_SHARED_SECONDS)


# The terms this process is fetching: (build, term) -> set when the fetch has ended.
_TERM_FETCHES: dict[tuple[str, str], threading.Event] = {}
_TERM_FETCHES_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Raced:
    """A write committed while a page read the database beside the rank index: `token` is
    the newer data token it saw."""

    token: str


# The data token of the read snapshot this request's page is read in (readcache.snapshot),
# None outside one: inside it no write can race the page's reads.
_SNAPSHOT: ContextVar[str | None] = ContextVar("pagecache_snapshot", default=None)


def _raced(token: str, seen: str | None = None) -> "_Raced | None":
    """A `_Raced` when the data token is no longer the index's `token` (`seen`: the token the
    statement that read the database carried; else it is read now), else None; never inside
    a read snapshot of `token`."""
    if _SNAPSHOT.get() == token:
        return None
    now = seen or readcache.read_tokens()["data"]  # (every kind has a token: read_tokens)
    return None if now == token else _Raced(now)


def _term_places(
    index: rankindex.RankIndex, token: str, term: str, *, db: str
) -> array | _Raced | None:
    """`term`'s places in this build; `_Raced`: the data changed during the search; None: the
    SQL path answers (the search another request of this process runs took longer than this
    one may wait).

    A term is searched once per build: kept here, or shared by another process holding the
    same build, or fetched by one query, which the other requests asking it meanwhile wait
    for (in this process, and with Redis in the others too) instead of each answering
    through the SQL path, whose COUNT and window read the same rows and more. A request
    waits at most until a second before its database deadline."""
    if (places := index.cached_term(term)) is not None:
        return places
    if _SNAPSHOT.get() == token:
        # Inside a read snapshot nothing waits for another's search: an open transaction
        # holds a pooler's (PgBouncer's) server connection all the while. Its places are
        # exact for this index: read at its token.
        return _kept_term(index, term, index.fetch_term(term, db=db))
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
            shared, claimed = readcache.wait_or_claim(
                claim,
                partial(_shared_term, index, term),
                _term_wait_seconds(),
                claim_seconds=RANK_INDEX_WAIT_SECONDS,
            )
            if shared is not None:
                return shared
        places = index.fetch_term(term, db=db)
        if raced := _raced(token):
            return raced  # a write committed meanwhile: the places may be newer than the index
        return _kept_term(index, term, places)
    finally:
        if claimed:
            cache.delete(claim)  # shared or given up: nobody waits for this search any more
        with _TERM_FETCHES_LOCK:
            _TERM_FETCHES.pop(key).set()


def _kept_term(index: rankindex.RankIndex, term: str, places: array) -> array:
    """`term`'s places, fetched for this build: kept here and shared with the other processes."""
    index.keep_term(term, places)
    _share_term(index, term, places)
    return places


# How many times a list page goes round the rank index when writes keep committing while it
# reads the database beside it, before the SQL path answers (after the first, each in a read
# snapshot where there is one: then only another request moving the index past it races it).
INDEX_ATTEMPTS = 3


@dataclass(frozen=True)
class _Found:
    """A page as the rank index answers it: the exact total, the ids and their ranks."""

    token: str  # the data token of the index and the SQL that answered it
    total: int
    ids: list[int]
    ranks: list[int | None]
    more: bool | None = None


# `_snapshot_found`'s answer where it has no read snapshot (SQLite, or inside a transaction).
_NO_SNAPSHOT = _Raced("")


def _index_page(
    *, filters: StartupFilters, offset: int, limit: int, after: After | None
) -> StartupPage | None:
    """The page from the rank index, None when it cannot answer (the SQL path does). A write
    that commits while the page reads its ids, its cursor's place or its term in SQL leaves
    what it read newer than the index: the page goes round again, on PostgreSQL inside one
    read snapshot (`_snapshot_found`), which no write can race, elsewhere on the index moved
    on to that write (milliseconds), up to INDEX_ATTEMPTS times, rather than to the SQL path,
    whose exact count reads every matching row (about a second of PostgreSQL at 1,000,000,
    where the one page in a hundred that raced a founder's edit took most of its CPU)."""
    page = {"filters": filters, "offset": offset, "limit": limit, "after": after}
    newer = None
    for attempt in range(INDEX_ATTEMPTS):
        found = _snapshot_found(**page) if attempt else _NO_SNAPSHOT
        if found is _NO_SNAPSHOT:
            if (built := RANK_INDEX.reach(newer)) is None or (attempt and built is OVERTAKEN):
                return None
            if built is OVERTAKEN:
                continue  # every move raced a write: moved inside a snapshot next, where one is
            index_token, index = built
            # (the replica only once it has replayed the index's token, which may be newer
            # than the request's)
            db = readcache.fill_db(token=index_token)
            found = _found_from_index(index, index_token, db=db, **page)
        if not isinstance(found, _Raced):
            break
        newer = found.token
    else:
        return None
    return None if found is None else _page_of(found)


def _page_of(found: _Found) -> StartupPage:
    """The page of what the index found, its rows from the copies current at its token (the
    index may be newer than the request's own token: a copy the request's token still
    allows may be older than the ranks beside it)."""
    startups = _ranked_rows(found.ids, found.ranks, token=found.token) if found.ids else []
    return StartupPage(startups=startups, total=found.total, more=found.more)


def _snapshot_found(
    *, filters: StartupFilters, offset: int, limit: int, after: After | None
) -> _Found | _Raced | None:
    """The page's total, ids and ranks read inside one read snapshot of the database
    (readcache.snapshot): the index moved on to the snapshot's own data token through it,
    and the page's ids, cursor place or term read in it, so a write committing meanwhile
    changes none of them (writes at tens a second raced the retries apart). `_Raced` with
    a newer token when another request moved the index past the snapshot; None when the
    index cannot answer; `_NO_SNAPSHOT` where there is no snapshot or the index cannot reach
    its token (`current` then builds or moves it as usual). The rows are read after it, as
    the copies have them at its token (`_page_of`). On the primary: the index follows the
    primary's newest token (`_carried`), which a replica's snapshot may not have reached."""
    db = readcache.PRIMARY
    with ExitStack() as open_snapshot:
        # The moves' lock is waited for before the snapshot opens, never inside it: an open
        # transaction holds a pooler's server connection, which the thread moving the index
        # may be waiting for. Released once the index is at the snapshot's token.
        with RANK_INDEX.moving:
            token = open_snapshot.enter_context(readcache.snapshot(db))
            built = None if token is None else RANK_INDEX.at(token, db=db)
        if built is None:
            return _NO_SNAPSHOT
        if built[0] != token:
            return _Raced(built[0])
        marker = _SNAPSHOT.set(token)
        try:
            return _found_from_index(
                built[1], token, db=db, filters=filters, offset=offset, limit=limit, after=after
            )
        finally:
            _SNAPSHOT.reset(marker)


def _page_from_index(
    index: rankindex.RankIndex,
    token: str,
    *,
    filters: StartupFilters,
    offset: int,
    limit: int,
    after: After | None,
) -> StartupPage | _Raced | None:
    """The page (its rows too) from the rank index built under the data `token` (see
    `_found_from_index`)."""
    found = _found_from_index(
        index,
        token,
        db=readcache.fill_db(token=token),
        filters=filters,
        offset=offset,
        limit=limit,
        after=after,
    )
    return _page_of(found) if isinstance(found, _Found) else found


def _found_from_index(
    index: rankindex.RankIndex,
    token: str,
    *,
    db: str,
    filters: StartupFilters,
    offset: int,
    limit: int,
    after: After | None,
) -> _Found | _Raced | None:
    """The page's total, ids and ranks from the rank index built under the data `token`:
    SQL (on `db`) only for the ids of a page in another order than the default one or after
    a cursor (index walks) and for a term's places. `_Raced` when a write committed while it
    read the database; None when the index cannot answer (then the SQL path does)."""
    if filters.q and not filters.category:
        places = _term_places(index, token, filters.q, db=db)
        if places is None or isinstance(places, _Raced):
            return places
    asked_sql = False
    subsets = index.subsets(filters, db=db)
    if subsets is False:
        return None
    total = index.total(filters, subsets)
    more, seen = None, None  # seen: the data token the page's ids were read under
    if after is not None and limit <= 0:
        ids, more = [], False
    elif after is not None and filters.sort == selectors.DEFAULT_SORT:
        place = index.after_place(after, db=db)
        ids = index.default_order_ids(filters, subsets, 0, limit + 1, start=place)
        more, ids, asked_sql = len(ids) > limit, ids[:limit], True
    elif after is not None:
        ordered = selectors.startups_after(selectors.startup_list(filters=filters).using(db), after)
        ids, seen = _ids_with_token(ordered, 0, limit + 1)
        more, ids, asked_sql = len(ids) > limit, ids[:limit], True
    elif limit <= 0 or offset >= total:
        return _Found(token=token, total=total, ids=[], ranks=[])
    elif (walked := index.page_ids(filters, subsets, offset, limit)) is not None:
        ids = walked
    elif listsql.compiles(filters):  # another order: its b-tree walked in SQL for the ids
        ids, seen = listsql.ordered_ids(filters, offset, offset + limit, db=db)
        asked_sql = True
    else:
        ordered = selectors.startup_list(filters=filters).using(db)
        ids, seen = _ids_with_token(ordered, offset, offset + limit)
        asked_sql = True
    if asked_sql and (raced := _raced(token, seen)):
        return raced  # a write committed meanwhile: the ids may be newer than the index
    ranks = index.ranks(filters, subsets, ids)
    ranked = [ranks[startup_id] for startup_id in ids]
    return _Found(token=token, total=total, ids=ids, ranks=ranked, more=more)


def _ids_with_token(ordered: QuerySet, start: int, stop: int) -> tuple[list[int], str | None]:
    """The ids of `ordered[start:stop]` and the data token, read by one statement, so from
    one snapshot: the ids are of the data that token names (a second query for the token
    was a second round trip on every page in another order than the default one). None for
    the token when the slice is empty."""
    token = Generation.objects.filter(kind="data").values("token")[:1]
    rows = ordered.annotate(data_token=Subquery(token)).values_list("id", "data_token")
    found = list(rows[start:stop])
    return [startup_id for startup_id, _ in found], (found[0][1] if found else None)


def _ranked_rows(
    ids: list[int], ranks: list[int | None], *, token: str | None = None
) -> list[Startup]:
    """The list rows of `ids` with their ranks, from the per-process copies current at the
    data `token` (the request's when None) or one query by primary key for the missing ones;
    a startup unpublished since is left out."""
    stamp = readcache.row_stamp(token) if ids else None
    rows = LIST_ROWS.lookup(ids, stamp)
    # The sync time of kept rows is read beside them (a sync may have stamped it since).
    fresh = FRESHNESS.values(list(rows), usable=lambda value: True)
    missing = [startup_id for startup_id in ids if startup_id not in rows]
    if missing:
        position = FRESHNESS.position()
        names, found = listsql.list_row_values(missing, db=readcache.fill_db(token=token))
        names = _ROW_SHAPES.setdefault(names, names)
        synced = names.index("synced_at") if found else 0
        for startup_id, values in found.items():
            rows[startup_id] = kept = (names, values)
            LIST_ROWS.put(startup_id, kept, startup_id, stamp)
            FRESHNESS.seed(startup_id, (values[synced], NOT_READ), position, partial=True)
    startups = []
    for startup_id, rank in zip(ids, ranks, strict=True):
        if (kept := rows.get(startup_id)) is not None:
            startups.append(startup := _row(kept, rank))
            if startup_id in fresh:
                startup.synced_at = fresh[startup_id][0]
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
    startup._state.db, startup._state.adding = readcache.fill_db(), False
    startup.rank = rank
    return startup


def _sql_page(
    *, filters: StartupFilters, offset: int, limit: int, after: After | None
) -> StartupPage:
    """`selectors.startup_page` read from the primary, its rows kept as copies."""
    stamp, position = readcache.row_stamp(), FRESHNESS.position()  # before the rows are read
    page = selectors.startup_page(
        filters=filters, offset=offset, limit=limit, after=after, db=readcache.fill_db()
    )
    for startup in page.startups:
        LIST_ROWS.put(startup.id, _kept_row(startup), startup.id, stamp)
        FRESHNESS.seed(startup.id, (startup.synced_at, NOT_READ), position, partial=True)
    return page


def _skeleton(page: StartupPage) -> dict:
    """The page's total, and its ids and ranks (0: none) as the bytes of 8-byte integers:
    plain values, not tracked by the garbage collector (see _kept_row; an array would be),
    and with its 16-byte key some 1 KB a kept skeleton instead of 6 KB as tuples of ints
    under the filters' JSON (30 MB per process once the bench's varied rows fill SKELETONS)."""
    return {
        "total": page.total,
        "ids": array("q", [startup.id for startup in page.startups]).tobytes(),
        "ranks": array("q", [startup.rank or 0 for startup in page.startups]).tobytes(),
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
    digest = hashlib.sha256(
        orjson.dumps({**asdict(filters), "offset": offset, "limit": limit, "after": position})
    ).digest()
    identity = digest[:16]
    found, token = SKELETONS.lookup([identity]) if seconds > 0 else ({}, SKELETONS.token())
    skeleton, page = found.get(identity), None
    if skeleton is None and rankindex.answers(filters):
        page = _index_page(filters=filters, offset=offset, limit=limit, after=after)
    if skeleton is None and page is None:
        key = readcache.shared_key(LIST_CACHE_VERSION, token, digest.hex())
        skeleton = readcache.shared_get(key) if seconds > 0 else None
        if skeleton is None:
            page = _sql_page(filters=filters, offset=offset, limit=limit, after=after)
            if seconds > 0:
                readcache.shared_set(key, _skeleton(page), seconds)
    if page is not None:
        if seconds > 0 and token is not None:
            SKELETONS.put(identity, _skeleton(page), token)
        return page
    if token is not None and not found:
        SKELETONS.put(identity, skeleton, token)
    ids, ranks = (memoryview(skeleton[part]).cast("q").tolist() for part in ("ids", "ranks"))
    startups = _ranked_rows(ids, [rank or None for rank in ranks])
    return StartupPage(startups=startups, total=skeleton["total"], more=skeleton["more"])


readcache.on_clear(RANK_INDEX.clear)
