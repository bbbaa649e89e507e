"""Moving the rank index on from one data token to the next (startups/rankindex.py): the
Change rows in between name the startups that changed; each is read again and put at its new
place (found within its group of equal MRR by a search in the database's own name order,
`staying_ahead`) into a copy of the index, in milliseconds, the places of categories and
kept terms handed on as they are and brought forward on use (`catch_up`), instead of a
rebuild that reads every startup (seconds at 1,000,000). startups/pagecache.py calls
`follow` when a request brings a newer token."""

import hashlib
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy
from django.db.models import BooleanField, ExpressionWrapper

from core import rowcopies
from startups.models import Change, Startup
from startups.rankindex import (
    MAX_STEPS,
    NARROW,
    PLACE,
    WIDE,
    RankIndex,
    narrowed,
    probes,
    unaffected_by,
)
from startups.selectors import (
    RANK_ORDER,
    StartupFilters,
    published_startups,
    search,
    startup_list,
)

# The order within a group of equal MRR: the default order's after its MRR.
NAME_ORDER = RANK_ORDER[1:]

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
    # The changed startups as they are now, in the default order: their order among
    # themselves in the new index.
    rows = list(
        startup_list(filters=StartupFilters())
        .using(db)
        .filter(id__in=changed)
        .values("id", "name", "slug", "mrr", "category", "description")
    )
    terms = index.term_names()
    found_terms = terms_finding(rows, terms, db=db)
    gone = sorted(p for p in map(index.place, changed) if p is not None)
    ahead = staying_ahead(index, rows, gone, db=db)
    placed = [
        Placed(
            place=ahead[n] + n,  # the startups staying ahead of it, and the changed ones
            startup_id=row["id"],
            neg_mrr=None if row["mrr"] is None else -row["mrr"],
            category=row["category"],
            terms=found_terms[row["id"]],
        )
        for n, row in enumerate(rows)
    ]
    copy = moved(index, changed, placed, terms)
    copy.root, copy.build_id = index.root, moved_build_id(index.root, upto)
    return copy


def staying_ahead(index: RankIndex, rows: list[dict], gone: list[int], *, db: str) -> list[int]:
    """For each changed startup (`rows`, as they are now), how many of the startups that stay
    (those of `index` not at the places `gone`) come before it in the new order: those with
    more MRR (binary search), then those of its group of equal MRR (or, without MRR, the
    trailing block) before it by name and slug. The group is in `index` in that order, so its
    staying startups before it are a prefix, found by a search that narrows the group
    PROBES-fold a round: each round, one statement orders the probed startups of every
    changed one together with them, in the database's own name order (its collation). A
    COUNT over the group instead walked every startup of it (tens of thousands in the
    trailing block at 100,000), one statement per changed startup, at every move.
    (RankIndex.after_place searches a group for a cursor's place the same way.)"""
    spans = []  # per changed startup: the old places [lo, hi) still to search
    for row in rows:
        if row["mrr"] is None:
            spans.append((index.ranked, len(index.ids)))
        else:
            neg = -row["mrr"]
            spans.append((bisect_left(index.neg_mrr, neg), bisect_right(index.neg_mrr, neg)))
    while probed := {n: ps for n, span in enumerate(spans) if (ps := probes(*span, gone))}:
        asked = {rows[n]["id"] for n in probed}
        asked.update(index.ids[p] for ps in probed.values() for p in ps)
        by_name = Startup.objects.using(db).filter(id__in=asked).order_by(*NAME_ORDER)
        order = {startup_id: n for n, startup_id in enumerate(by_name.values_list("id", flat=True))}
        for n, ps in probed.items():  # (a startup deleted since `upto`: the caller reads again)
            mine = order.get(rows[n]["id"], -1)
            k = sum(1 for p in ps if order.get(index.ids[p], -1) < mine)  # a prefix of them
            spans[n] = narrowed(*spans[n], ps, k)
    return [lo - bisect_left(gone, lo) for lo, _ in spans]


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


def moved(
    index: RankIndex, removed: Iterable[int], placed: list["Placed"], terms: Iterable[str] = ()
) -> RankIndex:
    """A copy of `index` with the startups `removed` taken out and those `placed` put
    in at their places (in the new order). `index` is left as it is: requests still
    reading it see the data it was built for. The places of its categories and of its kept
    `terms` (those `placed` were matched against) are handed on as they are, of an older
    move: a request that uses one brings it forward (`catch_up`); a move costs what
    changed, however many terms are kept."""
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
    step = Step(gone=tuple(gone), placed=tuple(placed))
    version = index.version + 1
    with index._lock:  # (a request may be bringing one of them forward meanwhile)
        categories = dict(index.categories)
        kept = OrderedDict((term, index.terms[term]) for term in terms if term in index.terms)
        oldest = version - MAX_STEPS  # the blocks of moves the copy still keeps
        composed = {span: block for span, block in index.composed.items() if span[0] >= oldest}
    for entry in placed:  # a category no startup had: none before this move
        if entry.category is not None and entry.category not in categories:
            categories[entry.category] = (index.version, array(PLACE))
    copy = RankIndex(
        ids=ids,
        neg_mrr=neg_mrr,
        position=position,
        categories=categories,
        version=version,
        steps=(*index.steps, step)[-MAX_STEPS:],
        catch_up=catch_up,
        composed=composed,
    )
    copy.terms = kept
    copy._term_places = sum(len(places) for _, places in kept.values())
    # Those the moves kept would leave behind are brought forward now: each category and term
    # once per MAX_STEPS moves at most (a term dropped instead was searched again, and under
    # tens of writes a second such searches kept racing the writes).
    for name, (since, _) in categories.items():
        if version - since >= MAX_STEPS:
            copy.category_places(name)
    for term, (since, _) in list(kept.items()):
        if version - since >= MAX_STEPS:
            copy.cached_term(term, recent=False)
    return copy


@dataclass(frozen=True)
class Step:
    """One move: the old places taken out (ascending) and the entries put in (`Placed`, in
    the new order)."""

    gone: tuple[int, ...]
    placed: tuple["Placed", ...]


def catch_up(index: RankIndex, places: array, version: int, key: tuple[str, str]) -> array:
    """Sorted `places` of the move `version` brought to `index`'s, through the moves since
    taken as aligned blocks (`blocks`), each composed into one: the places that stay
    remapped in one pass a block (`_remap`), the startups put in during it that `key`
    (("category", name) or ("term", term)) finds added at their places."""
    for composed in blocks(index, version):
        places = _remap(places, composed.removed, composed.starts)
        if added := composed.finding.get(key):
            old = _view(places)
            merged = numpy.insert(old, numpy.searchsorted(old, added), added)
            places = array(places.typecode)
            _extend(places, merged)  # (numpy.insert keeps the places' item type)
    return places


def blocks(index: RankIndex, version: int) -> Iterable["Composed"]:
    """The moves from `version` to `index`'s as at most 2 log2(MAX_STEPS) blocks, each of
    2**k moves from a multiple of 2**k, composed once (`Composed.of`) and kept in
    `index.composed`, which each move hands on: whatever move a category or term was
    last brought to, every block it needs was composed for another or is composed once
    now. Composing all the moves since a set's own move instead took each set its own
    fold of up to MAX_STEPS moves: with the bench's 84 terms and ~20 categories last used
    at different moves, under 20 visible writes a second about every move folded 256
    moves (the sitting of 2026-11-29 14:10, 100,000 startups: up to 80 CPU ms a request)."""
    first = index.version - len(index.steps)  # the move index.steps[0] starts from
    at = version
    while at < index.version:
        size = at & -at or 1 << index.version.bit_length()  # the largest 2**k dividing it
        while at + size > index.version:
            size //= 2
        if (composed := index.composed.get((at, size))) is None:
            steps = index.steps[at - first : at - first + size]
            composed = index.composed[(at, size)] = Composed.of(steps)
        yield composed
        at += size


@dataclass(frozen=True)
class Composed:
    """Moves in a row as one: the places of the first one's order taken out (ascending), the
    starts of the entries put in (`_insert_starts`), and the places in the last one's order
    of the startups put in on the way (as their last change left them) that each category
    and term finds, ascending: {("category", name) or ("term", term): places}."""

    removed: list[int]
    starts: list[int]
    finding: dict[tuple[str, str], list[int]]

    @classmethod
    def of(cls, steps: Iterable[Step]) -> "Composed":
        """The steps folded one by one, over numpy arrays (a Python loop over the entries of
        every step took 72 ms for 256 moves of one startup)."""
        removed = numpy.zeros(0, dtype=numpy.int64)  # places of the first order, ascending
        places = numpy.zeros(0, dtype=numpy.int64)  # the entries put in, in the order reached
        which = numpy.zeros(0, dtype=numpy.int64)  # each one's `Placed`, in `payload`
        payload: list[Placed] = []
        for step in steps:
            gone = numpy.array(step.gone, dtype=numpy.int64)
            at = numpy.searchsorted(places, gone)
            hit = at < len(places)
            hit[hit] = places[at[hit]] == gone[hit]  # an entry put in on the way
            rank = (gone - at)[~hit]  # else the rank of a place of the first order that stays
            before = removed - numpy.arange(len(removed))  # places that stay before each
            taken = rank + numpy.searchsorted(before, rank, side="right")
            removed = numpy.sort(numpy.concatenate([removed, taken]))
            keep = numpy.ones(len(places), dtype=bool)
            keep[at[hit]] = False
            places, which = places[keep], which[keep]
            new = [entry.place for entry in step.placed]
            starts = numpy.array(_insert_starts(list(step.gone), new), dtype=numpy.int64)
            places = (
                places
                - numpy.searchsorted(gone, places, side="left")
                + numpy.searchsorted(starts, places, side="right")
            )
            places = numpy.concatenate([places, new])
            order = numpy.argsort(places, kind="stable")
            places = places[order]
            added = numpy.arange(len(payload), len(payload) + len(new))
            which = numpy.concatenate([which, added])[order]
            payload.extend(step.placed)
        finding: dict[tuple[str, str], list[int]] = {}
        for place, n in zip(places.tolist(), which.tolist(), strict=True):
            entry = payload[n]
            if entry.category is not None:
                finding.setdefault(("category", entry.category), []).append(place)
            for term in entry.terms:
                finding.setdefault(("term", term), []).append(place)
        removed_places = removed.tolist()
        return cls(removed_places, _insert_starts(removed_places, places.tolist()), finding)


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
