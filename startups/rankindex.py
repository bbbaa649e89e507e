"""The rank order of the published startups, in memory: totals and ranks in O(log n).

`meta.total` and `rank` are exact answers over the whole filtered set: in SQL an exact
`COUNT(*)` walks every matching row and a rank within a sort other than MRR is a window over the
whole set, so both grow with the dataset (issue 19: 18x fewer requests per second at 1,000,000
startups than at 100,000 for `sort=name-asc`). For the filters most requests carry (an MRR
range, a category or a search term, or none) this structure answers both by binary search
instead:

- `ids`: every published startup in the default order (`mrr DESC NULLS LAST, lower(name),
  slug`, read from PostgreSQL so its collation decides), ranked ones (with MRR) first;
- `neg_mrr`: their MRR negated (ascending), so an MRR range is a slice [lo, hi) of `ids`;
- `position`: id -> place in `ids` + 1 (0: not published);
- per stored category value, the sorted places of its startups;
- per `q` term asked, the sorted places of the startups it finds (one SQL query per term
  and data generation, then reused by every page, sort and MRR range with that term).

An MRR range's startups are the contiguous slice [lo, hi) of `ids`, so its total is `hi - lo`
and a startup's rank in it is its place minus `lo`; with a category or a term, the same counts
are taken in the matching sorted places. Pages in the default order and in ascending MRR (the
same groups of equal MRR, read from the last one back) are walked here too; the other orders
walk their own index in SQL for the page's ids. The structure is exact for the data it was
built from; startups/pagecache.py keeps one per process under the data token and never uses
an old one. A write moves its startups' entries (startups/rankmoves.py: the Change rows since the
build, the changed startups read again, each one's new place found within its group of
equal MRR; the places of categories and terms brought forward when used) into a copy, in
milliseconds; a rebuild reads every startup (seconds at 1,000,000)
and happens only when many startups changed at once or the token started a new epoch (the SQL
path answers while it runs).
"""

import json
import secrets
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from heapq import merge
from itertools import chain, compress, islice

from django.db import connections, transaction
from django.db.models.functions import Lower

from startups import listsql
from startups.models import Startup
from startups.selectors import (
    DEFAULT_SORT,
    After,
    StartupFilters,
    after_name,
    published_startups,
    search,
    startup_list,
)

_FETCH = 20_000
_BIGINT = 2**63 - 1
# Places in the order (and id -> place) fit 4 bytes. Ids and MRRs too, as long as every one
# does (`NARROW`, widened to `WIDE` by the first that does not): at 1,000,000 startups the
# structure is 16.5 MB instead of 24, and every move copies that much less.
PLACE = "i"
NARROW, WIDE = "i", "q"
# The shape and item types of `shared_form`, inside the shared payload: a process loads only
# the payload it knows (a rolling deploy runs old and new processes on one Redis). Bump it,
# with pagecache.RANK_INDEX_KEY, at any change to either.
SHARED_FORMAT = 2
# The moves a copy keeps (startups/rankmoves.py `Step`): the places of a category or term
# kept at an older move are brought to the copy's on first use, through the moves since in
# blocks each composed once (`rankmoves.blocks`), or by the move that would leave them behind.
MAX_STEPS = 256
# Startups one statement compares with a sort key, per round of the search for its place
# within a group of equal MRR (`probes`): three rounds narrow 262,144 startups to one place.
PROBES = 64
# Term place sets kept per structure, in all at most this many times the dataset's size.
MAX_TERM_PLACES = 4
# The places whose union a `q` or `category` filter keeps; None: no such filter.
Subsets = list[array] | None


# Change fields (API names) that nothing in the rank index depends on: its order (MRR, name,
# slug), its sets (published, category) and its search terms (name, category, description).
BLIND_FIELDS = frozenset(
    {
        "icon",
        "website",
        "industry",
        "businessType",
        "founded",
        "country",
        "teamSize",
        "technologies",
        "founderName",
        "revenue.arr",
        "revenue.currency",
        "revenue.growth30d",
        "onSale",
        "askingPrice",
        "owner",
        "aiAddon",
        "verification.arr",
        "verification.totalRevenue",
        "verification.last30Days",
        "verification.customers",
        "verification.monthly",
        "verification.status",
        "verification.provider",
    }
)


def unaffected_by(changes: Iterable[tuple[str, list[str]]]) -> bool:
    """Whether an index stays exact over these Change rows ((kind, fields) each): every one an
    update naming only BLIND_FIELDS (a creation, a tombstone or an unitemised change is not)."""
    return all(
        kind == "updated" and fields and set(fields) <= BLIND_FIELDS for kind, fields in changes
    )


def appended(values: array, value: int) -> array:
    """`values` with `value` appended: the same array, or a wider copy when `value` does not
    fit its items (NARROW -> WIDE)."""
    try:
        values.append(value)
    except OverflowError:
        values = array(WIDE, values)
        values.append(value)
    return values


# A category's or term's sorted places and the move (`RankIndex.version`) they are of: a move
# hands them on as they are, the first use brings them to its copy's (`RankIndex._brought_forward`).
Kept = tuple[int, array]


@dataclass
class RankIndex:
    ids: array  # ids in the default order
    neg_mrr: array  # -mrr of the ranked prefix of `ids`
    position: array  # id -> index in `ids` + 1
    # stored category -> sorted indexes into `ids` (arrays given are of this version: Kept)
    categories: dict[str, Kept | array]
    # Names this build: term places are shared between processes holding the same build.
    build_id: str = field(default_factory=lambda: secrets.token_hex(8))
    # The build_id of the build this one was moved from (startups/rankmoves.py), else its own.
    root: str = ""
    # q term -> sorted indexes of the startups it finds (filled on use, see fetch_term)
    terms: OrderedDict[str, Kept] = field(default_factory=OrderedDict)
    # Moves since the build `root` (0: the build itself), and the last MAX_STEPS of them with
    # the function that brings older places through them (startups/rankmoves.py).
    version: int = 0
    steps: tuple = ()
    catch_up: Callable[["RankIndex", array, int, tuple[str, str]], array] | None = None
    _term_places: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Blocks of the moves kept, each composed once: (first move, moves) -> its composite
    # (rankmoves.blocks), handed on by each move.
    composed: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root or self.build_id
        self.categories = {
            name: places if isinstance(places, tuple) else (self.version, places)
            for name, places in self.categories.items()
        }

    def shared_form(self) -> tuple:
        """What another process needs to use this build (its arrays pickle as their bytes),
        headed by SHARED_FORMAT; term places travel one by one (`keep_term`)."""
        categories = {name: self.category_places(name) for name in list(self.categories)}
        return (SHARED_FORMAT, self.build_id, self.ids, self.neg_mrr, self.position, categories)

    def category_places(self, name: str) -> array:
        """The category's places, brought to this copy's move here first if they are older."""
        with self._lock:
            return self._brought_forward(self.categories, name, "category")

    def _brought_forward(self, kept: dict[str, Kept], name: str, kind: str) -> array:
        """`kept[name]`'s places at this copy's move, brought forward through the moves since
        (`catch_up`, startups/rankmoves.py) and kept so when they are older. Under `_lock`."""
        version, places = kept[name]
        if version != self.version:
            if self.catch_up is None or self.version - version > len(self.steps):
                # (never: a move brings them forward before they would fall behind)
                raise RuntimeError(f"the {kind} {name!r} fell behind the moves kept")
            places = self.catch_up(self, places, version, (kind, name))
            kept[name] = (self.version, places)
        return places

    @classmethod
    def from_shared_form(cls, form: tuple) -> "RankIndex | None":
        """The build `shared_form` gave; None for a payload of another format (another
        version's process shared it: the caller builds its own)."""
        if not isinstance(form, tuple) or len(form) != 6 or form[0] != SHARED_FORMAT:
            return None
        _, build_id, ids, neg_mrr, position, categories = form
        return cls(
            ids=ids, neg_mrr=neg_mrr, position=position, categories=categories, build_id=build_id
        )

    @property
    def ranked(self) -> int:
        return len(self.neg_mrr)

    def span(self, filters: StartupFilters) -> tuple[int, int]:
        """The slice of `ids` that the MRR bounds keep: all of it without a bound (startups
        without MRR included), else the ranked startups with min <= mrr <= max."""
        # As the ORM does: a bound every stored MRR meets is no condition at all (startups
        # without MRR then stay in), one none meets keeps nothing.
        low, high = filters.min_mrr, filters.max_mrr
        low = None if low is not None and low < 0 else low
        high = None if high is not None and high > _BIGINT else high
        if low is None and high is None:
            return 0, len(self.ids)
        lo = 0 if high is None else bisect_left(self.neg_mrr, -high)
        hi = self.ranked if low is None else bisect_right(self.neg_mrr, -low)
        return lo, max(lo, hi)

    def total(self, filters: StartupFilters, subsets: Subsets) -> int:
        lo, hi = self.span(filters)
        if subsets is None:
            return hi - lo
        return sum(_count(places, lo, hi) for places in subsets)

    def ranks(
        self, filters: StartupFilters, subsets: Subsets, ids: Iterable[int]
    ) -> dict[int, int | None]:
        """Each startup's rank: its place by MRR within the filtered set (None without MRR, or
        not in the set)."""
        lo, hi = self.span(filters)
        found = {}
        for startup_id in ids:
            place = self.place(startup_id)
            if place is None or not lo <= place < min(hi, self.ranked):
                found[startup_id] = None
            elif subsets is None:
                found[startup_id] = place - lo + 1
            else:
                found[startup_id] = 1 + sum(_count(places, lo, place) for places in subsets)
        return found

    def place(self, startup_id: int) -> int | None:
        if not 0 <= startup_id < len(self.position) or not self.position[startup_id]:
            return None
        return self.position[startup_id] - 1

    def default_order_ids(
        self,
        filters: StartupFilters,
        subsets: Subsets,
        offset: int,
        limit: int,
        *,
        start: int = 0,
    ) -> list[int]:
        """The ids of one page in the default order (`mrr-desc`): `offset` rows into the
        filtered set, counting from the place `start` in `ids` (a cursor's; 0: the top)."""
        lo, hi = self.span(filters)
        lo = max(lo, start)
        if subsets is None:
            first = lo + offset
            return list(self.ids[first : min(hi, first + limit)])
        if not subsets:
            return []
        parts = [islice(places, bisect_left(places, lo), None) for places in subsets]
        places = merge(*parts) if len(parts) > 1 else parts[0]
        within = (p for p in places if p < hi)
        return [self.ids[p] for p in islice(within, offset, offset + limit)]

    def page_ids(
        self, filters: StartupFilters, subsets: Subsets, offset: int, limit: int
    ) -> list[int] | None:
        """The ids of one page in the filters' order, for the orders this structure holds
        (MRR, either way); None for the others (their b-tree is walked in SQL)."""
        if filters.sort == DEFAULT_SORT:
            return self.default_order_ids(filters, subsets, offset, limit)
        if filters.sort == "mrr-asc":
            return self.ascending_ids(filters, subsets, offset, limit)
        return None

    def ascending_ids(
        self, filters: StartupFilters, subsets: Subsets, offset: int, limit: int
    ) -> list[int]:
        """The ids of one page in `mrr-asc` order (`mrr ASC NULLS LAST, lower(name), slug`):
        the default order's groups of equal MRR taken from the last one back, each group in
        its own (name, slug) order, then the startups without MRR as the default order has
        them."""
        lo, hi = self.span(filters)
        top = min(hi, self.ranked)  # ranked places are [lo, top), unranked [ranked, hi)
        if subsets is None:
            places = self._ascending_span(lo, top, offset, limit)
            skip = max(0, offset - max(0, top - lo))
            first = max(lo, self.ranked) + skip
            places.extend(range(first, min(hi, first + limit - len(places))))
            return [self.ids[p] for p in places]
        descending = [_backwards(places, lo, top) for places in subsets]
        unranked = [
            islice(places, bisect_left(places, max(lo, self.ranked)), bisect_left(places, hi))
            for places in subsets
        ]
        ranked = self._groups_in_order(merge(*descending, reverse=True))
        ordered = chain(ranked, merge(*unranked))
        return [self.ids[p] for p in islice(ordered, offset, offset + limit)]

    def _ascending_span(self, lo: int, top: int, offset: int, limit: int) -> list[int]:
        """Places `offset` to `offset + limit` of the ranked span [lo, top) in ascending MRR:
        the k-th one is in the group of the place `top - 1 - k`, found by binary search."""
        places: list[int] = []
        k = offset
        while len(places) < limit and k < top - lo:
            value = self.neg_mrr[top - 1 - k]
            group_lo = max(lo, bisect_left(self.neg_mrr, value, lo, top))
            group_hi = bisect_right(self.neg_mrr, value, lo, top)
            start = group_lo + k - (top - group_hi)
            take = min(group_hi - start, limit - len(places))
            places.extend(range(start, start + take))
            k += take
        return places

    def _groups_in_order(self, descending: Iterable[int]) -> Iterable[int]:
        """Ranked places walked from the last one back, with each run of equal MRR turned
        back into the default order's (name, slug) order."""
        group: list[int] = []
        for place in descending:
            if group and self.neg_mrr[place] != self.neg_mrr[group[0]]:
                yield from reversed(group)
                group = []
            group.append(place)
        yield from reversed(group)

    def subsets(self, filters: StartupFilters, *, db: str) -> Subsets | bool:
        """The sorted places whose union the filters' `q` or `category` keep (None: no such
        filter), or False when this structure cannot say now (both at once, a database it
        cannot ask, or a term it does not keep: see `fetch_term`): the SQL path answers
        then."""
        if filters.q and filters.category:
            return False
        if filters.category:
            names = matching_categories(self, filters.category, db=db)
            return False if names is None else [self.category_places(name) for name in names]
        if filters.q:
            places = self.cached_term(filters.q)
            return False if places is None else [places]
        return None

    def cached_term(self, term: str, *, recent: bool = True) -> array | None:
        """The places of a kept term, brought to this copy's move first if they are older
        (`recent`: and marked as the most recently used); None when it is not kept."""
        with self._lock:
            if (kept := self.terms.get(term)) is None:
                return None
            places = self._brought_forward(self.terms, term, "term")
            self._term_places += len(places) - len(kept[1])
            if recent:
                self.terms.move_to_end(term)
            return places

    def fetch_term(self, term: str, *, db: str) -> array:
        """The sorted places of the startups `q=term` finds, from one SQL query; not kept (the
        caller checks that the data did not change meanwhile, then calls `keep_term`). The
        rows are read in batches and marked in one byte per place, read back in order: a
        term finding 300,000 startups held some 20 MB of Python rows and lists at once."""
        qs = published_startups(db=db).filter(search(term)).values_list("id", flat=True)
        sql, params = qs.query.sql_with_params()
        found = bytearray(len(self.ids))
        with connections[db].cursor() as cursor:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(_FETCH):
                for (startup_id,) in batch:
                    if (place := self.place(startup_id)) is not None:
                        found[place] = 1
        return array(PLACE, compress(range(len(found)), found))

    def keep_term(self, term: str, places: array) -> None:
        """Keep `term`'s places (fetched here, or by another process from this same build),
        least recently used first out, about MAX_TERM_PLACES times the dataset's size in all."""
        with self._lock:
            if (old := self.terms.pop(term, None)) is not None:
                self._term_places -= len(old[1])
            self.terms[term] = (self.version, places)
            self._term_places += len(places)
            while self._term_places > MAX_TERM_PLACES * max(1, len(self.ids)) and self.terms:
                self._term_places -= len(self.terms.popitem(last=False)[1][1])

    def _mrr_at(self, place: int) -> int | None:
        return -self.neg_mrr[place] if place < self.ranked else None

    def after_place(self, after: After, *, db: str) -> int:
        """The place in `ids` of the first startup after the cursor `after` (default order).
        Usually the one after the cursor's own startup, found by its slug (one lookup by a
        unique key), when it still has the cursor's MRR and name, here and in the database.
        Else (it changed, or left): the startups with more MRR by binary search, then those
        of the same MRR (or, without MRR, the trailing block) not after the cursor by name
        and slug: a prefix of the group, found by a search that narrows it PROBES-fold a
        round, one statement on at most PROBES ids each (a COUNT over the group walked
        tens of thousands of rows in the trailing block at 100,000). The caller checks the
        data token afterwards, so the database read here is of the data the index holds."""
        found = listsql.sort_key_of(after.slug, db=db)
        if found is not None and found[1:] == (after.name, after.mrr):
            place = self.place(found[0])
            if place is not None and self._mrr_at(place) == after.mrr:
                return place + 1
        if after.mrr is not None:
            neg = -after.mrr
            lo, hi = bisect_left(self.neg_mrr, neg), bisect_right(self.neg_mrr, neg)
        else:
            lo, hi = self.ranked, len(self.ids)
        while probed := probes(lo, hi):
            not_after = set(
                published_startups(db=db)
                .alias(sort_name=Lower("name"))
                .filter(id__in=[self.ids[p] for p in probed])
                .exclude(after_name(after, descending=False))
                .values_list("id", flat=True)
            )
            k = sum(1 for p in probed if self.ids[p] in not_after)  # a prefix of them
            lo, hi = narrowed(lo, hi, probed, k)
        return lo

    def term_names(self) -> list[str]:
        with self._lock:
            return list(self.terms)


def probes(lo: int, hi: int, gone: list[int] = ()) -> list[int]:
    """Up to PROBES places in [lo, hi) not in the sorted `gone`, ascending, spread evenly
    from `lo` on: every one of them when there are no more; none when none is left there."""
    found: list[int] = []
    for n in range(PROBES):
        place = lo + n * (hi - lo) // PROBES
        while place < hi and (found and place <= found[-1] or _is_gone(place, gone)):
            place += 1
        if place < hi:
            found.append(place)
    return found


def narrowed(lo: int, hi: int, probed: list[int], k: int) -> tuple[int, int]:
    """The span [lo, hi) left to search once the first `k` of its `probed` places are known
    to come before what is sought and the rest after it."""
    return (probed[k - 1] + 1 if k else lo), (probed[k] if k < len(probed) else hi)


def _is_gone(place: int, gone: list[int]) -> bool:
    at = bisect_left(gone, place)
    return at < len(gone) and gone[at] == place


def _backwards(places: array, lo: int, hi: int) -> Iterable[int]:
    """The sorted `places` within [lo, hi), largest first."""
    first, stop = bisect_left(places, lo), bisect_left(places, hi)
    return (places[i] for i in range(stop - 1, first - 1, -1))


def _count(places: array, lo: int, hi: int) -> int:
    return bisect_left(places, hi) - bisect_left(places, lo) if hi > lo else 0


def answers(filters: StartupFilters) -> bool:
    """Whether the structure can answer these filters: MRR bounds, a category or a `q`, and
    the sort (what `startup_list` ignores counts as absent: an empty `website` or
    `country`)."""
    return (
        not filters.website
        and not filters.country
        and filters.on_sale is None
        and filters.verified is None
        and filters.updated_since is None
    )


def estimated_size(*, db: str) -> int:
    """About how many startups there are, without counting them on PostgreSQL (the planner's
    estimate; a table never analyzed is counted)."""
    connection = connections[db]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                [Startup._meta.db_table],
            )
            row = cursor.fetchone()
        if row and row[0] >= 0:
            return int(row[0])
    return Startup.objects.using(db).count()


def build(*, db: str) -> RankIndex:
    """Read the default order of every published startup from `db`: the ORM compiles the
    query (the same order as every list), the rows come in batches as plain tuples (the ORM's
    per-row handling doubled the time at 1,000,000 startups)."""
    ids, neg_mrr, by_category = array(NARROW), array(NARROW), {}
    qs = startup_list(filters=StartupFilters()).using(db).values_list("id", "mrr", "category")
    sql, params = qs.query.sql_with_params()
    index = 0
    # A server-side cursor where the database has one: the rows stream in batches instead of
    # arriving whole (a 1,000,000-row result kept ~100 MB in the worker after the build).
    # In a transaction on PostgreSQL, so it streams the cursor instead of materializing it
    # WITH HOLD (not on SQLite: its transactions here take the write lock at once).
    connection = connections[db]
    postgresql = connection.vendor == "postgresql"
    in_transaction = transaction.atomic(using=db) if postgresql else nullcontext()
    with in_transaction, connection.chunked_cursor() as cursor:
        if postgresql:
            # Every row is read: plan for all of them (a cursor otherwise gets the plan that
            # returns the first rows soonest, 2.5x slower here).
            with connection.cursor() as settings_cursor:
                settings_cursor.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(_FETCH):
            for startup_id, mrr, category in batch:
                try:  # (`appended` inline: the common case costs no call)
                    ids.append(startup_id)
                except OverflowError:
                    ids = appended(ids, startup_id)
                if mrr is not None:
                    try:
                        neg_mrr.append(-mrr)
                    except OverflowError:
                        neg_mrr = appended(neg_mrr, -mrr)
                if category is not None:
                    by_category.setdefault(category, array(PLACE)).append(index)
                index += 1
    position = array(PLACE, bytes(array(PLACE).itemsize * (max(ids, default=0) + 1)))
    for place, startup_id in enumerate(ids, start=1):
        position[startup_id] = place
    return RankIndex(ids=ids, neg_mrr=neg_mrr, position=position, categories=by_category)


def matching_categories(index: RankIndex, term: str, *, db: str) -> list[str] | None:
    """The stored categories that `category__icontains=term` keeps, decided by the database
    itself (its own case folding) over the distinct values; None where this database has no
    way to ask (the SQL path answers then)."""
    values = list(index.categories)
    connection = connections[db]
    pattern = "%" + connection.ops.prep_for_like_query(term) + "%"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT v FROM unnest(%s::text[]) AS t(v) WHERE UPPER(v) LIKE UPPER(%s)",
                [values, pattern],
            )
        elif connection.vendor == "sqlite":
            cursor.execute(
                "SELECT value FROM json_each(%s) WHERE value LIKE %s ESCAPE '\\'",
                [json.dumps(values), pattern],
            )
        else:
            return None
        return [row[0] for row in cursor.fetchall()]
