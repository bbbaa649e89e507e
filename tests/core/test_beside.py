"""Values read beside the kept copies (core/beside.py): kept while the "fresh" token is, read
again for the startups asked after a stamp replaced it, and dropped with the copies by a
visible change."""

from datetime import UTC, datetime

import pytest
from django.db import transaction

from core import beside as beside_module
from core import readcache
from core.beside import FRESH_CHECKPOINT, Beside, stamp_fresh
from core.models import FreshStamp
from startups.changes import startup_change_record
from startups.freshness import verification_stamp
from tests.support.factories import make_startup, make_verification

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("read_cache_on")]


class Reader:
    """The app's reader, counted: {id: "v<n>"} for the ids asked, n the number of reads."""

    def __init__(self) -> None:
        self.asked: list[list[int]] = []

    def __call__(self, ids: list[int], db: str) -> dict[int, str]:
        self.asked.append(sorted(ids))
        return {startup_id: f"v{len(self.asked)}" for startup_id in ids}


def recorded_write(startup) -> None:
    with transaction.atomic():
        startup_change_record(startup=startup, fields=["name"])


def stamped() -> None:
    with transaction.atomic():
        readcache.bump("fresh")


def test_values_are_read_once_per_stamp_and_only_for_the_startups_asked():
    a, b = make_startup(slug="a"), make_startup(slug="b")
    recorded_write(a)  # a token that names a sequence
    reader = Reader()
    beside = Beside(reader, max_entries=10)
    assert beside.values([a.pk, b.pk]) == {a.pk: "v1", b.pk: "v1"}
    assert beside.values([a.pk, b.pk]) == {a.pk: "v1", b.pk: "v1"}
    assert reader.asked == [sorted([a.pk, b.pk])]
    stamped()
    assert beside.values([a.pk]) == {a.pk: "v2"}
    assert beside.values([a.pk, b.pk]) == {a.pk: "v2", b.pk: "v3"}
    assert reader.asked[1:] == [[a.pk], [b.pk]]


def test_a_visible_change_drops_that_startups_value_only():
    a, b = make_startup(slug="a"), make_startup(slug="b")
    recorded_write(a)
    reader = Reader()
    beside = Beside(reader, max_entries=10)
    beside.values([a.pk, b.pk])
    recorded_write(b)
    assert beside.values([a.pk, b.pk]) == {a.pk: "v1", b.pk: "v2"}
    assert reader.asked[1:] == [[b.pk]]


def test_a_seeded_value_sends_no_query_and_a_partial_one_never_replaces_it():
    a = make_startup(slug="a")
    recorded_write(a)
    reader = Reader()
    beside = Beside(reader, max_entries=10)
    position = beside.position()
    beside.seed(a.pk, ("full",), position)
    beside.seed(a.pk, ("partial",), position, partial=True)
    assert beside.values([a.pk]) == {a.pk: ("full",)}
    assert beside.values([a.pk], usable=lambda value: value != ("full",)) == {a.pk: "v1"}
    assert len(reader.asked) == 1


def test_a_sync_stamp_forgets_that_startups_value_only():
    """Under the refresh worker (a stamp every ~0.1 s at 100,000 startups) the other startups'
    values stay: before, every stamp made every process read them all again."""
    a, b = make_startup(slug="a", mrr=10), make_startup(slug="b", mrr=20)
    make_verification(a), make_verification(b)
    recorded_write(a)
    stamp_fresh(b.pk)  # a fresh token that names a sequence
    reader = Reader()
    beside = Beside(reader, max_entries=10)
    assert beside.values([a.pk, b.pk]) == {a.pk: "v1", b.pk: "v1"}
    read_before = FRESH_CHECKPOINT.applied_rows  # counts for the process, across tests
    with transaction.atomic():
        verification_stamp(startup=a, at=datetime(2026, 11, 28, 12, tzinfo=UTC))
    assert beside.values([a.pk, b.pk]) == {a.pk: "v2", b.pk: "v1"}
    assert reader.asked[1:] == [[a.pk]]
    assert FRESH_CHECKPOINT.applied_rows - read_before == 1  # one stamp read, once


def test_a_value_read_under_an_older_fresh_token_is_refused_after_its_startups_stamp():
    a = make_startup(slug="a")
    recorded_write(a)
    stamp_fresh(a.pk)
    reader = Reader()
    beside = Beside(reader, max_entries=10)
    position = beside.position()  # before the row is read
    stamp_fresh(a.pk)  # a sync commits between the position and the value's read
    beside.seed(a.pk, "read before the stamp", position)
    assert beside.values([a.pk]) == {a.pk: "v1"}


def test_old_stamps_are_pruned(monkeypatch):
    monkeypatch.setattr(beside_module, "KEEP_STAMPS", 3)
    monkeypatch.setattr(beside_module, "PRUNE_EVERY", 1)
    a = make_startup(slug="a")
    for _ in range(6):
        stamp_fresh(a.pk)
    assert FreshStamp.objects.count() == 3
    token = readcache.read_tokens()["fresh"]
    assert token.endswith(f".{FreshStamp.objects.order_by('-id').first().pk}")
