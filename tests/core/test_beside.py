"""Values read beside the kept copies (core/beside.py): kept while the "fresh" token is, read
again for the startups asked after a stamp replaced it, and dropped with the copies by a
visible change."""

import pytest
from django.db import transaction

from core import readcache
from core.beside import Beside
from startups.changes import startup_change_record
from tests.support.factories import make_startup

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
