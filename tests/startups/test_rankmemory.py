"""What a worker keeps for lists, compact: the rank index (startups/rankindex.py,
startups/rankmoves.py) with ids and MRRs in 4 bytes while they fit and moves that leave the
places of categories and terms shared with the index they were moved from until a request
uses them (every answer stays the one a fresh build gives), and list skeletons
(startups/pagecache.py) as bytes under a 16-byte key."""

import random
import sys
from array import array

import pytest
from django.db import transaction

from core import readcache
from startups import pagecache, rankindex, rankmoves
from startups.changes import startup_change_record
from startups.models import Startup
from startups.selectors import StartupFilters
from tests.support.factories import make_startup

CATEGORIES = ["Developer Tools", "Design Tools", "Marketing", None]
TERMS = ["tools", "alpha", "o"]

pytestmark = pytest.mark.usefixtures("read_cache_on")


def dataset(rng: random.Random, count: int = 60) -> None:
    for n in range(count):
        make_startup(
            f"{rng.choice(['alpha', 'Beta', 'gamma tools'])} {rng.randrange(3)}",
            slug=f"m-{n:03d}",
            mrr=rng.choice([None, 0, 5, 5, 100, 1000]),
            category=rng.choice(CATEGORIES),
        )


def mrr_write(startup_id: int, mrr: int) -> None:
    with transaction.atomic():
        Startup.objects.filter(pk=startup_id).update(mrr=mrr)
        startup = Startup.objects.get(pk=startup_id)
        startup_change_record(startup=startup, kind="updated", fields=["revenue.mrr"])


def with_terms(index: rankindex.RankIndex) -> rankindex.RankIndex:
    for term in TERMS:
        index.keep_term(term, index.fetch_term(term, db="default"))
    return index


def moved_on(index: rankindex.RankIndex, write) -> rankindex.RankIndex:
    before = readcache.read_tokens()["data"]
    write()
    after = readcache.read_tokens()["data"]
    moved = rankmoves.follow(index, since=before, to=after, db="default")
    assert moved is not None and moved is not index
    return moved


def assert_same(index: rankindex.RankIndex, fresh: rankindex.RankIndex) -> None:
    assert list(index.ids) == list(fresh.ids)
    assert list(index.neg_mrr) == list(fresh.neg_mrr)
    assert list(index.position) == list(fresh.position)[: len(index.position)]
    for name in fresh.categories:
        assert list(index.category_places(name)) == list(fresh.category_places(name)), name
    for term in TERMS:
        assert list(index.cached_term(term)) == list(fresh.fetch_term(term, db="default")), term


@pytest.mark.django_db
def test_a_move_hands_on_the_places_of_categories_and_terms_as_they_are():
    """A move does no work per category or kept term (thousands of terms once many searches
    ran): it hands on their places as they are, of the move they were computed at; a request
    that uses one brings it forward. Every answer is a fresh build's."""
    rng = random.Random(7)
    dataset(rng)
    mrr_write(Startup.objects.first().pk, 5)  # the token names a sequence from here on
    index = with_terms(rankindex.build(db="default"))
    ids = list(Startup.objects.filter(is_published=True).values_list("id", flat=True))
    moved = moved_on(index, lambda: mrr_write(rng.choice(ids), 100))
    moved = moved_on(moved, lambda: mrr_write(rng.choice(ids), 1000))
    assert moved.version == 2
    for kept, source in ((moved.categories, index.categories), (moved.terms, index.terms)):
        assert kept and all(kept[name] is source[name] for name in kept)
    assert_same(moved, rankindex.build(db="default"))


@pytest.mark.django_db
def test_many_moves_in_a_row_stay_exact_past_the_moves_kept(monkeypatch):
    """A copy keeps the last MAX_STEPS moves: a category or term not used for that long is
    brought forward by the move that would leave it behind (a term dropped instead was
    searched again, and under tens of writes a second those searches kept racing the
    writes); the steps held stay bounded and every answer is a fresh build's, without
    searching a kept term again."""
    monkeypatch.setattr(rankmoves, "MAX_STEPS", 5)
    rng = random.Random(8)
    dataset(rng)
    mrr_write(Startup.objects.first().pk, 5)
    index = with_terms(rankindex.build(db="default"))
    ids = list(Startup.objects.filter(is_published=True).values_list("id", flat=True))
    searched = []
    monkeypatch.setattr(rankindex.RankIndex, "fetch_term", spy_on(searched))
    for n in range(4 * 5 + 3):
        mrr = rng.choice([None, 1, 5, 1000, 50])
        index = moved_on(index, lambda mrr=mrr: mrr_write(rng.choice(ids), mrr))
        assert len(index.steps) <= 5
        kept = [*index.categories.values(), *index.terms.values()]
        assert all(index.version - since < 5 for since, _ in kept)
        if n % 3 == 0:  # "alpha" used every third move, the others never
            fresh = rankindex.build(db="default")
            assert list(index.cached_term("alpha")) == list(fresh.fetch_term("alpha", db="default"))
    assert list(index.terms) == ["tools", "o", "alpha"]  # the order of their last use
    monkeypatch.undo()
    assert searched == []  # no copy moved on searched a term (fresh builds are version 0)
    assert_same(index, rankindex.build(db="default"))


def spy_on(searched: list):
    """RankIndex.fetch_term, noting the searches of copies moved on (version > 0)."""
    fetch = rankindex.RankIndex.fetch_term

    def wrapped(self, term, *, db):
        if self.version:
            searched.append(term)
        return fetch(self, term, db=db)

    return wrapped


def plain_index(order: list[int], finds: dict[str, set[int]]) -> rankindex.RankIndex:
    """An index of plain arrays over the startups `order`, keeping each term of `finds`."""
    position = array("i", [0] * 300)
    for place, startup_id in enumerate(order):
        position[startup_id] = place + 1
    index = rankindex.RankIndex(
        ids=array("i", order), neg_mrr=array("i"), position=position, categories={}
    )
    for term, found in finds.items():
        index.keep_term(term, array("i", [p for p, i in enumerate(order) if i in found]))
    return index


def random_move(rng, index, order, finds, p=0.4) -> tuple[rankindex.RankIndex, list[int]]:
    """A move of 1-4 random startups: taken out, or put in (again) at a random place with
    a new answer to each term (found with probability `p`); the index moved and the new
    order."""
    changed = rng.sample(range(300), rng.randrange(1, 5))
    new_order = [i for i in order if i not in changed]
    for startup_id in changed:
        if rng.random() < 0.8:  # changed and still listed (else: gone)
            new_order.insert(rng.randrange(len(new_order) + 1), startup_id)
            for found in finds.values():
                (found.add if rng.random() < p else found.discard)(startup_id)
    placed = [
        rankmoves.Placed(
            place=new_order.index(i),
            startup_id=i,
            neg_mrr=None,
            category=None,
            terms=frozenset(term for term, found in finds.items() if i in found),
        )
        for i in changed
        if i in new_order
    ]
    return rankmoves.moved(index, changed, placed, list(finds)), new_order


def test_moves_composed_into_one_give_the_places_of_one_move_at_a_time():
    """A term's places brought forward through many moves at once (rankmoves.blocks: the
    moves since in aligned blocks, each composed into one: the places that stay remapped
    in one pass, those put in during it added) are the places its startups have after the
    last move, for random moves that take startups out, put new ones in and move changed
    ones (whose text may no longer match), on an index of plain arrays, with terms
    brought forward at different moves."""
    rng = random.Random(33)
    for _ in range(40):
        order = rng.sample(range(1, 300), rng.randrange(1, 120))
        finds = {term: {i for i in range(300) if rng.random() < 0.4} for term in "tuv"}
        index = plain_index(order, finds)
        used = rng.random() < 0.5  # brought forward at some moves, or only at the end
        for _ in range(rng.randrange(1, 40)):
            index, order = random_move(rng, index, order, finds)
            assert list(index.ids) == order
            if used and rng.random() < 0.3:
                index.cached_term(rng.choice("tuv"))
        for term, found in finds.items():
            expected = [p for p, i in enumerate(order) if i in found]
            assert list(index.cached_term(term)) == expected, term


def test_sets_kept_at_different_moves_share_the_blocks_that_bring_them_forward(monkeypatch):
    """Terms last used at different moves are brought forward through blocks of moves that
    every copy moved on from the same build shares, each composed once: the moves folded
    stay within log2(MAX_STEPS) + 1 per move, however many terms are kept. Folding all the
    moves since each term's own move instead (a fold of up to 256 moves per term used)
    took most moves and many requests under 20 visible writes a second (80 CPU ms a
    request in the sitting of 2026-11-29 14:10)."""
    folded = []  # every move a composite was made of
    compose = rankmoves.Composed.of.__func__

    def counted(cls, steps):
        steps = list(steps)
        folded.extend(steps)
        return compose(cls, steps)

    monkeypatch.setattr(rankmoves.Composed, "of", classmethod(counted))
    rng = random.Random(34)
    order = rng.sample(range(1, 300), 150)
    terms = [f"t{n}" for n in range(40)]
    # (few places each: a structure keeps MAX_TERM_PLACES times its size in all)
    finds = {term: {i for i in range(300) if rng.random() < 0.05} for term in terms}
    index = plain_index(order, finds)
    moves = 200
    for _ in range(moves):
        index, order = random_move(rng, index, order, finds, p=0.05)
        index.cached_term(rng.choice(terms))  # each term at a move of its own
    assert list(index.terms) and set(index.terms) == set(terms)  # none given up
    for term, found in finds.items():
        assert list(index.cached_term(term)) == [p for p, i in enumerate(order) if i in found]
    assert len(folded) <= moves * (rankmoves.MAX_STEPS.bit_length())  # log2(256) + 1 = 9


@pytest.mark.django_db
def test_ids_and_mrrs_take_four_bytes_and_widen_for_an_mrr_past_them():
    rng = random.Random(9)
    dataset(rng, count=20)
    mrr_write(Startup.objects.first().pk, 5)
    index = rankindex.build(db="default")
    assert (index.ids.itemsize, index.neg_mrr.itemsize, index.position.itemsize) == (4, 4, 4)
    big = Startup.objects.filter(is_published=True).last().pk
    moved = moved_on(index, lambda: mrr_write(big, 2**40))
    fresh = rankindex.build(db="default")
    assert moved.neg_mrr.itemsize == fresh.neg_mrr.itemsize == 8
    assert_same(with_terms(moved), with_terms(fresh))
    for low in (None, 6, 2**35, 2**40, 2**40 + 1):
        filters = StartupFilters(min_mrr=low)
        assert moved.total(filters, None) == fresh.total(filters, None)
        assert moved.page_ids(filters, None, 0, 5) == fresh.page_ids(filters, None, 0, 5)
    assert moved.place(big) == fresh.place(big) == 0


@pytest.mark.django_db
def test_a_kept_list_skeleton_is_a_few_hundred_bytes_and_serves_the_same_page(settings):
    settings.LIST_CACHE_SECONDS = 30
    for n in range(6):
        make_startup(f"Kept {n}", mrr=None if n == 5 else 100 * n)
    mrr_write(Startup.objects.first().pk, 7)
    filters = StartupFilters(sort="name-asc")  # an order the rank index does not hold

    def served() -> list:
        page = pagecache.startup_page(filters=filters, offset=0, limit=10)
        return [(s.slug, s.rank, s.mrr) for s in page.startups] + [page.total]

    first = served()
    (key, (_, _, skeleton)), *_ = pagecache.SKELETONS._entries.items()
    assert len(key) == 16
    assert all(isinstance(skeleton[part], bytes) for part in ("ids", "ranks"))
    size = sum(sys.getsizeof(value) for value in [key, *skeleton.values()])
    assert size < 1_000
    assert served() == first and None in [rank for _, rank, _ in first[:-1]]


def test_places_are_shifted_and_renumbered_as_one_place_at_a_time_would():
    """rankmoves' array arithmetic (numpy over the arrays' buffers) against the rule written
    one place at a time: a place that stays moves back by the removed places below it and on
    by the entries put in at or below it; id -> place follows the new order."""
    rng = random.Random(32)
    for _ in range(300):
        size = rng.randrange(0, 60)
        places = sorted(rng.sample(range(200), size))
        gone = sorted(rng.sample(range(200), rng.randrange(0, 6)))
        starts = sorted(rng.choices(range(200), k=rng.randrange(0, 6)))
        expected = [
            p - sum(g < p for g in gone) + sum(s <= p for s in starts)
            for p in places
            if p not in gone
        ]
        for code in ("i", "q"):
            found = rankmoves._remap(array(code, places), gone, starts)
            assert (found.typecode, list(found)) == (code, expected)
    ids = array("i", rng.sample(range(50), 50))
    position = array("i", [0] * 50)
    rankmoves._renumber(position, ids, 5, 40)
    assert all(position[ids[p]] == p + 1 for p in range(5, 40))
    assert [position[ids[p]] for p in (*range(5), *range(40, 50))] == [0] * 15


def test_a_startup_keeping_its_place_leaves_the_categories_places_shared():
    """A move that shifts no place of a category (an MRR edit that keeps the startup's place,
    or a move wholly below or above the category's places) hands on the very same places:
    no copy of them per write. A startup put into a category at such a place gets a copy."""
    index = rankindex.RankIndex(
        ids=array("i", [4, 1, 3, 2, 5]),
        neg_mrr=array("i", [-50, -40, -30, -20]),
        position=array("i", [0, 2, 4, 3, 1, 5]),
        categories={"Tools": array("i", [0, 3, 4]), "Design": array("i", [1])},
    )
    stays = rankmoves.Placed(place=2, startup_id=3, neg_mrr=-30, category="Design")
    moved = rankmoves.moved(index, [3], [stays])
    assert moved.category_places("Tools") is index.categories["Tools"][1]
    assert list(moved.category_places("Design")) == [1, 2]
    assert list(index.category_places("Design")) == [1]  # the index moved from: as it was
    up = rankmoves.Placed(place=3, startup_id=5, neg_mrr=-20, category="Tools")
    moved = rankmoves.moved(index, [5], [up])
    assert moved.category_places("Design") is index.categories["Design"][1]
