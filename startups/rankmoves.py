"""Moving the rank index on from one data token to the next (startups/rankindex.py): the
Change rows in between name the startups that changed; each is read again and put at its new
place (counted within its group of equal MRR, in the database's own name order) into a copy
of the index, in milliseconds, instead of a rebuild that reads every startup (seconds at
1,000,000). startups/pagecache.py calls `follow` when a request brings a newer token."""

import hashlib
from array import array
from bisect import bisect_left, insort
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial

import numpy
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.functions import Lower

from core import rowcopies
from startups.models import Change
from startups.rankindex import (
    MAX_PENDING_MOVES,
    NARROW,
    PLACE,
    WIDE,
    Pending,
    Places,
    RankIndex,
    unaffected_by,
)
from startups.selectors import DEFAULT_SORT, After, after_name, published_startups, search

# More changed startups than this between two data tokens: a rebuild reads them all instead.
MAX_MOVED = 2_000


def follow(index: RankIndex, *, since: str, to: str, db: str) -> RankIndex | None:
    """`index`, built under the data token `since`, moved on to the newer token `to` (the
    change service's `<epoch>.<sequence>`, core/rowcopies.py): None when the two are of
    different epochs (a write the sequence does not itemise) or too much changed."""
    (epoch, old), (new_epoch, new) = rowcopies.parse(since), rowcopies.parse(to)
    if epoch != new_epoch or old is None or new is None:
        return None
    return index if new <= old else apply_changes(index, after=old, upto=new, db=db)


def apply_changes(index: RankIndex, *, after: int, upto: int, db: str) -> RankIndex | None:
    """`index` moved on by the Change rows in (after, upto]: the same index when none of them
    touched what it holds, a moved copy (`moved`), or None when too many startups
    changed (build anew). The changed startups are read as the database has them now: the
    caller checks that the data token is still the one of `upto` afterwards, else the copy
    may hold writes newer than that token."""
    changes = Change.objects.using(db).filter(id__gt=after, id__lte=upto).order_by()
    found = list(changes.values_list("startup_id", "kind", "fields")[: 10 * MAX_MOVED + 1])
    if len(found) > 10 * MAX_MOVED:
        return None
    if unaffected_by((kind, fields) for _, kind, fields in found):
        return index
    changed = {startup_id for startup_id, _, _ in found}
    if len(changed) > MAX_MOVED:
        return None
    rows = list(
        published_startups(db=db)
        .filter(id__in=changed)
        .values("id", "name", "slug", "mrr", "category", "description")
    )
    found_terms = terms_finding(rows, index.term_names(), db=db)
    ranked = [row["mrr"] for row in rows if row["mrr"] is not None]
    gone = [p for p in map(index.place, changed) if p is not None]
    ranked_staying = index.ranked - sum(1 for p in gone if p < index.ranked)
    placed = []
    for row in rows:
        mrr = row["mrr"]
        if mrr is None:  # after every ranked startup, those staying and those changed
            ahead = ranked_staying + len(ranked)
        else:  # the startups with more MRR: those staying (binary search), those changed
            more = bisect_left(index.neg_mrr, -mrr)
            ahead = more - sum(1 for p in gone if p < more) + sum(1 for m in ranked if m > mrr)
        cursor = After(sort=DEFAULT_SORT, slug=row["slug"], name=row["name"], mrr=mrr)
        group = Q(mrr__isnull=True) if mrr is None else Q(mrr=mrr)
        # Its group of equal MRR before it, in the database's own name order (collation).
        within = (
            published_startups(db=db)
            .alias(sort_name=Lower("name"))
            .filter(group, after_name(cursor, descending=True))
            .count()
        )
        placed.append(
            Placed(
                place=ahead + within,
                startup_id=row["id"],
                neg_mrr=None if mrr is None else -mrr,
                category=row["category"],
                terms=found_terms[row["id"]],
            )
        )
    copy = moved(index, changed, placed)
    copy.root, copy.build_id = index.root, moved_build_id(index.root, upto)
    return copy


# The text `q` searches (selectors.search).
SEARCHED = ("name", "category", "description")


def terms_finding(rows: list[dict], terms: list[str], *, db: str) -> dict[int, frozenset[str]]:
    """For each changed startup's row (its SEARCHED text), the kept `q` terms that find it.
    Where the term and the row's text are ASCII, `icontains` is a plain case-insensitive
    substring test on every backend, done here; the rest (a term or a text with other
    characters, whose case the database folds by its own rules) is asked of the database,
    for those terms and rows only. One ORM expression per kept term on every move (some
    thousands once the bench's `q` rows ran) cost each move up to a second of CPU to
    compile, and at tens of visible writes a second the moves took the workers."""
    plain = [term for term in terms if term.isascii()]
    other = [term for term in terms if not term.isascii()]
    found: dict[int, set[str]] = {}
    ascii_rows, other_rows = [], []  # the startups the database answers for: other terms, all
    for row in rows:
        texts = [row[field] for field in SEARCHED if row[field] is not None]
        if all(text.isascii() for text in texts):
            folded = [text.lower() for text in texts]
            found[row["id"]] = {t for t in plain if any(t.lower() in text for text in folded)}
            ascii_rows.append(row["id"])
        else:
            found[row["id"]] = set()
            other_rows.append(row["id"])
    for ids, ask in ((ascii_rows, other), (other_rows, terms)):
        if not ids or not ask:
            continue
        finds = {
            f"term_{n}": ExpressionWrapper(search(term), output_field=BooleanField())
            for n, term in enumerate(ask)
        }
        answers = published_startups(db=db).filter(id__in=ids).annotate(**finds)
        for row in answers.values("id", *finds):
            found[row["id"]].update(term for n, term in enumerate(ask) if row[f"term_{n}"])
    return {startup_id: frozenset(terms) for startup_id, terms in found.items()}


def moved_build_id(root: str, sequence: int) -> str:
    """The name of every copy moved from the build `root` to the change `sequence`: they hold
    the same entries, however many moves each took (each is exact for the data of that
    sequence: a copy whose rows a later write overtook is never kept), so the processes
    holding one share their terms' places as they do the build's."""
    return hashlib.sha256(f"{root}.{sequence}".encode()).hexdigest()[:16]


def moved(index: RankIndex, removed: Iterable[int], placed: list["Placed"]) -> RankIndex:
    """A copy of `index` with the startups `removed` taken out and those `placed` put
    in at their places (in the new order). `index` is left as it is: requests still
    reading it see the data it was built for. The places of its categories and terms are
    not copied here but left pending (`rankindex.Pending`): remapped when a request uses them."""
    gone = sorted(p for p in map(index.place, removed) if p is not None)
    placed = sorted(placed)
    ids, neg_mrr = index.ids[:], index.neg_mrr[:]
    for place in reversed(gone):
        del ids[place]
        if place < len(neg_mrr):  # ranked: the prefix of the order
            del neg_mrr[place]
    for entry in placed:
        ids = inserted(ids, entry.place, entry.startup_id)
        if entry.neg_mrr is not None:
            neg_mrr = inserted(neg_mrr, entry.place, entry.neg_mrr)
    starts = _insert_starts(gone, [entry.place for entry in placed])
    position = index.position[:]
    top = max([len(position) - 1, *(entry.startup_id for entry in placed)])
    position.extend(bytes(position.itemsize * (top + 1 - len(position))))
    for startup_id in removed:
        if 0 <= startup_id < len(position):
            position[startup_id] = 0
    events = gone + [entry.place for entry in placed]
    if events:  # the places that moved: from the first change to where shifts end
        last = len(ids) if len(gone) != len(placed) else max(events) + 2 * len(events) + 1
        _renumber(position, ids, min(events), min(len(ids), last))
    in_category: dict[str, list[int]] = {}
    in_term: dict[str, list[int]] = {}
    for entry in placed:  # ascending places
        if entry.category is not None:
            in_category.setdefault(entry.category, []).append(entry.place)
        for term in entry.terms:
            in_term.setdefault(term, []).append(entry.place)
    move = partial(_pending, gone=gone, starts=starts)
    with index._lock:  # (a request may be remapping one of them meanwhile)
        kept, sets = list(index.terms.items()), list(index.categories.items())
    categories = {name: move(places, added=in_category.get(name, ())) for name, places in sets}
    for name, added in in_category.items():
        categories.setdefault(name, array(PLACE, added))
    terms = OrderedDict((term, move(places, added=in_term.get(term, ()))) for term, places in kept)
    copy = RankIndex(ids=ids, neg_mrr=neg_mrr, position=position, categories=categories)
    copy.terms = terms
    copy._term_places = sum(len(places) for places in terms.values())
    return copy


def _pending(places: Places, *, gone: list[int], starts: list[int], added: Iterable[int]) -> Places:
    """`places` as the move maps them (`_moved_places`), left for the first use to compute;
    computed now (with those it depends on) past MAX_PENDING_MOVES in a row."""
    added = tuple(added)
    remap = partial(_moved_places, gone=gone, starts=starts, added=added)
    pending = Pending(places, remap, len(places) + len(added))
    return pending.resolve() if pending.depth > MAX_PENDING_MOVES else pending


def _moved_places(
    places: array, *, gone: list[int], starts: list[int], added: tuple[int, ...]
) -> array:
    """The sorted old `places` in the new order (`_remap`), with the new places `added`."""
    found = _remap(places, gone, starts)
    if added and found is places:  # (never insert into an array another index holds)
        found = places[:]
    for place in added:
        insort(found, place)
    return found


def inserted(values: array, place: int, value: int) -> array:
    """`values` with `value` inserted at `place`: the same array, or a wider copy when
    `value` does not fit its items (rankindex.NARROW -> WIDE)."""
    try:
        values.insert(place, value)
    except OverflowError:
        values = array(WIDE, values)
        values.insert(place, value)
    return values


@dataclass(frozen=True, order=True)
class Placed:
    """A changed startup as it is now: its place in the new order, its MRR negated (None
    without MRR), its stored category and the kept `q` terms that find it."""

    place: int
    startup_id: int
    neg_mrr: int | None = field(compare=False)
    category: str | None = field(compare=False)
    terms: frozenset[str] = field(compare=False, default=frozenset())


def _insert_starts(gone: list[int], places: list[int]) -> list[int]:
    """For each entry put in (their new places, ascending), the first old place from which
    an entry that stays comes after it: the entries that stay keep their order, so the j-th
    one put in comes after `place - j` of them; an old place counts them less the removed
    places before it."""
    starts, k = [], 0
    for j, place in enumerate(places):
        before = place - j  # entries that stay, in front of it
        while k < len(gone) and gone[k] < before + k:
            k += 1
        starts.append(before + k)
    return starts


# array typecodes as numpy dtypes: the index's arrays are worked on in place through their
# buffers (numpy: a Python loop over a million places took ~0.1 s a move at 1,000,000).
_DTYPES = {NARROW: numpy.int32, WIDE: numpy.int64}  # PLACE is NARROW


def _view(values: array) -> numpy.ndarray:
    """`values` as a numpy array sharing its memory (drop it before `values` is resized)."""
    return numpy.frombuffer(values, dtype=_DTYPES[values.typecode])


def _renumber(position: array, ids: array, start: int, stop: int) -> None:
    """position[ids[place]] = place + 1 for every place in [start, stop)."""
    if stop > start:
        _view(position)[_view(ids)[start:stop]] = numpy.arange(start + 1, stop + 1)


def _remap(places: array, gone: list[int], starts: list[int]) -> array:
    """The sorted old `places` without those `gone`, in the new order's places: each moves
    back by the removed places before it and on by the entries put in before it (the
    `starts` at or below it). Only the stretch [lo, hi) between the first and the last of
    those is worked on place by place: below it nothing shifts, from it on every place by as
    many as were put in less those removed. `places` itself when none of them moves (a
    startup that keeps its place: the category's places are shared, not copied)."""
    if not gone and not starts:
        return places
    lo = min(gone[:1] + starts[:1])
    hi = max(gone[-1] + 1 if gone else 0, starts[-1] if starts else 0)
    first, stop = bisect_left(places, lo), bisect_left(places, hi)
    tail = len(starts) - len(gone)  # the shift of every place from `hi` on
    if first == stop and not tail:
        return places
    old = _view(places)
    found = places[:first]
    if stop > first:
        _extend(found, _remap_stretch(old[first:stop], gone, starts))
    _extend(found, old[stop:] + tail if tail else old[stop:])
    return found


def _remap_stretch(middle: numpy.ndarray, gone: list[int], starts: list[int]) -> numpy.ndarray:
    """`_remap` within [lo, hi), as runs of one shift each: the shift changes only at a removed
    place (itself left out), the place after it and a start, so it is computed once per run
    and repeated over the run's places (computing it for each place, by binary search, took
    ~20 ms for half a million places)."""
    bounds = sorted({*gone, *(place + 1 for place in gone), *starts})  # bounds[0]: lo
    shifts = numpy.searchsorted(starts, bounds, side="right") - numpy.searchsorted(
        gone, bounds, side="left"
    )
    runs = numpy.diff(numpy.searchsorted(middle, bounds), append=len(middle))
    found = middle + numpy.repeat(shifts.astype(middle.dtype), runs)
    if gone:  # the removed places among them, left out
        at, removed = numpy.searchsorted(middle, gone), numpy.array(gone, dtype=middle.dtype)
        inside = at < len(middle)
        at, removed = at[inside], removed[inside]
        found = numpy.delete(found, at[middle[at] == removed])
    return found


def _extend(values: array, more: numpy.ndarray) -> None:
    """`values` extended by the items of `more` (of its own item type), copied once."""
    values.frombytes(more.view(numpy.uint8))
