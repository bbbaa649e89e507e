"""Per-startup copies follow the change sequence (core/rowcopies.py): a change to one
startup drops only that startup's copies; a write the sequence does not itemise (a new epoch)
drops them all; and answers served while writes keep coming equal the database's.
"""

import random

import pytest
from django.db import transaction

from core import readcache, rowcopies
from core.models import Generation
from founders.services import PROFILE_FIELDS, startup_update
from restapi import profiles
from startups import pagecache
from startups.changes import startup_change_record
from startups.models import Change, Startup
from startups.selectors import SORT_ORDERS
from tests.support.factories import (
    make_account,
    make_pro_key,
    make_startup,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rank_index_on")]

SORTS = list(SORT_ORDERS)  # every order the list has


@pytest.fixture
def pro(db) -> dict:
    key, raw = make_pro_key()
    return {"HTTP_X_API_KEY": raw}


def profile_of(startup: Startup, **changes) -> dict:
    return {**{name: getattr(startup, name) for name in PROFILE_FIELDS}, **changes}


def founder_edit(startup: Startup, *, mrr: int | None, **changes) -> None:
    """An edit as its founder makes it (a confirmed owner: founders' actions need one)."""
    if startup.owner_id is None:
        startup.owner = make_account()
        Startup.objects.filter(pk=startup.pk).update(owner=startup.owner)
    startup_update(startup=startup, profile=profile_of(startup, **changes), mrr=mrr)


def recorded_write(startup: Startup) -> None:
    """A change through the sequence, as the dashboard's first edit leaves it: the token then
    names a sequence (a token created by an ORM save starts an epoch)."""
    with transaction.atomic():
        startup_change_record(startup=startup, fields=["name"])


def test_a_founder_edit_drops_only_that_startups_profile(client, pro, django_assert_num_queries):
    acme = make_startup(name="Acme", slug="acme", mrr=100)
    make_startup(name="Beta", slug="beta", mrr=200)
    recorded_write(acme)
    for slug in ("acme", "beta"):
        assert client.get(f"/api/v1/startups/{slug}", **pro).status_code == 200

    founder_edit(Startup.objects.get(slug="acme"), name="Acme Two", mrr=150)

    # The tokens, then the Change rows since this process's checkpoint: Beta's copy stays.
    with django_assert_num_queries(2):
        beta = client.get("/api/v1/startups/beta", **pro)
    assert beta.status_code == 200 and beta.json()["data"]["name"] == "Beta"
    with django_assert_num_queries(1):
        client.get("/api/v1/startups/beta", **pro)
    acme_now = client.get("/api/v1/startups/acme", **pro).json()["data"]
    assert acme_now["name"] == "Acme Two" and acme_now["revenue"]["mrr"] == 150


def test_a_change_keeps_every_other_list_row(client, pro, settings):
    settings.LIST_CACHE_SECONDS = 0
    startups = [make_startup(name=f"Row {n:02d}", mrr=1000 + n) for n in range(20)]
    recorded_write(startups[0])
    client.get("/api/v1/startups?limit=20", **pro)
    assert len(pagecache.LIST_ROWS) == 20

    founder_edit(startups[5], name="Row Five", mrr=5)
    readcache.row_stamp()  # what the next request does first
    kept = {entry[3] for entry in pagecache.LIST_ROWS._entries.values()}
    assert kept == {s.pk for s in startups} - {startups[5].pk}
    body = client.get("/api/v1/startups?limit=20", **pro).json()
    assert body["data"][-1]["name"] == "Row Five" and body["data"][-1]["rank"] == 20


def test_a_write_the_sequence_does_not_itemise_drops_every_copy(client, pro):
    acme = make_startup(name="Acme", slug="acme", mrr=100)
    recorded_write(acme)
    client.get("/api/v1/startups/acme", **pro)
    assert len(profiles.PROFILES) == 1
    # What another server's ORM save (or an older release's write) leaves: a random token.
    Startup.objects.filter(pk=acme.pk).update(name="Renamed elsewhere")
    Generation.objects.filter(kind="data").update(token="0123456789abcdef")
    assert client.get("/api/v1/startups/acme", **pro).json()["data"]["name"] == "Renamed elsewhere"


def test_a_copy_built_before_a_change_this_process_applied_is_refused():
    """A request that read sequence 10, then its rows, may finish after another request
    applied 11 for the same startup: its copy may hold the older row and is not kept."""
    rows = {11: [(7, 11)], 12: [(8, 12)]}
    checkpoint = rowcopies.Checkpoint(lambda after, upto: rows.get(upto, []))
    copies = rowcopies.RowCopies(checkpoint, max_entries=10, seconds=lambda: 60)
    slow = checkpoint.stamp("e.10")
    assert checkpoint.stamp("e.11") == ("e", 11)  # another request applies 11 meanwhile
    copies.put("seven", "old", 7, slow)
    copies.put("eight", "fine", 8, slow)
    assert copies.lookup(["seven", "eight"], ("e", 11)) == {"eight": "fine"}
    # A request that read an older token: only copies of startups unchanged since serve it.
    copies.put("seven", "new", 7, ("e", 11))
    assert checkpoint.stamp("e.10") == ("e", 10)
    assert copies.lookup(["seven", "eight"], ("e", 10)) == {"eight": "fine"}
    assert copies.lookup(["seven", "eight"], ("e", 11)) == {"seven": "new", "eight": "fine"}
    checkpoint.stamp("e.12")
    assert copies.lookup(["eight"], ("e", 12)) == {}
    assert checkpoint.stamp("f") == ("f", rowcopies.UNKNOWN)  # a new epoch
    assert checkpoint.epoch == "f" and not checkpoint.last_change


def test_the_change_service_keeps_the_epoch_and_names_the_sequence():
    acme = make_startup(name="Acme", slug="acme", mrr=100)
    recorded_write(acme)
    first = Generation.objects.get(kind="data").token
    recorded_write(acme)
    second = Generation.objects.get(kind="data").token
    epoch, sequence = rowcopies.parse(second)
    assert epoch == rowcopies.parse(first)[0] and sequence > rowcopies.parse(first)[1]
    assert sequence == Change.objects.order_by("-id").values_list("id", flat=True)[0]


def _list_query(rng: random.Random) -> str:
    params = [f"sort={rng.choice(SORTS)}", f"limit={rng.choice([1, 5, 10, 50])}"]
    if rng.random() < 0.4:
        params.append(f"minMrr={rng.choice([0, 10, 500, 5000])}")
    if rng.random() < 0.3:
        params.append(f"q={rng.choice(['alpha', 'beta', 'o', 'zz'])}")
    if rng.random() < 0.3:
        params.append(f"category={rng.choice(['Tools', 'Marketing'])}")
    if rng.random() < 0.3:
        params.append(f"page={rng.choice([2, 3])}")
    return "?" + "&".join(params)


def test_cached_answers_equal_the_database_while_writes_interleave(client, pro, settings):
    """Random writes (founders' edits moving MRR and names, unpublishing and publishing through
    the sequence, a daily growth change, ORM writes that start an epoch) between random reads:
    every cached answer (`meta.total`, every `rank`, every field) equals the uncached one."""
    settings.LIST_CACHE_SECONDS = 0
    rng = random.Random(32)
    names = ["alpha one", "Alpha two", "beta", "gamma", "omega", "zeta"]
    startups = [
        make_startup(
            name=f"{rng.choice(names)} {n}",
            slug=f"r-{n:03d}",
            mrr=rng.choice([None, 0, 5, 500, 5000, 20000]),
            category=rng.choice(["Developer Tools", "Marketing", None]),
        )
        for n in range(40)
    ]
    recorded_write(startups[0])
    compared = 0
    for step in range(120):
        target = Startup.objects.get(pk=rng.choice(startups).pk)
        roll = rng.random()
        if roll < 0.6:
            founder_edit(target, name=f"{rng.choice(names)} {step}", mrr=rng.randrange(0, 30000))
        elif roll < 0.75:
            with transaction.atomic():
                Startup.objects.filter(pk=target.pk).update(is_published=not target.is_published)
                target.refresh_from_db()
                startup_change_record(startup=target, fields=["is_published"])
        elif roll < 0.85:
            with transaction.atomic():
                Startup.objects.filter(pk=target.pk).update(growth_30d=rng.randrange(-50, 50))
                startup_change_record(startup=target, fields=["revenue.growth30d"])
        elif roll < 0.9:
            target.description = f"saved {step}"
            target.save()  # an ORM save: a new epoch
        for _ in range(3):
            if rng.random() < 0.7:
                url = "/api/v1/startups" + _list_query(rng)
            else:
                url = f"/api/v1/startups/{rng.choice(startups).slug}"
            cached = client.get(url, **pro)
            settings.READ_CACHE_SECONDS = 0
            plain = client.get(url, **pro)
            settings.READ_CACHE_SECONDS = 300
            assert cached.status_code == plain.status_code, url
            if cached.status_code != 200:
                assert cached.json()["error"]["code"] == plain.json()["error"]["code"]
                continue
            assert cached.json() == plain.json(), (step, url)
            compared += 1
    assert compared > 250
    assert readcache.CHECKPOINT.applied_rows > 50  # the per-row path did the work


def test_a_sync_that_changes_figures_keeps_the_epoch(fake_providers):
    """A visible sync is itemised by its Change row: it must not also start a new epoch (a
    model save caught by the read cache's receivers), or every sync of the refresh worker
    would drop every startup's copies in every process."""
    from datetime import UTC, datetime, timedelta

    from tests.support.verification_fakes import stripe_account
    from verification.connections import provider_connection_connect
    from verification.services import revenue_sync

    now = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
    acme = make_startup("Acme", slug="acme")
    fake_providers.account("rk_live_rows1", stripe_account(charged=1761955200))  # 2025-11-01
    connection = provider_connection_connect(
        startup=acme, provider="stripe", raw_key="rk_live_rows1", api_base=fake_providers.base_url
    )
    revenue_sync(connection=connection, now=now)
    recorded_write(acme)  # the token now names a sequence
    before = rowcopies.parse(Generation.objects.get(kind="data").token)
    fake_providers.account("rk_live_rows1", stripe_account(charged=1793491200))  # 2026-11-01
    connection.refresh_from_db()
    revenue_sync(connection=connection, now=now + timedelta(minutes=5))
    after = rowcopies.parse(Generation.objects.get(kind="data").token)
    assert Change.objects.filter(id__gt=before[1], startup_id=acme.pk).exists()
    assert after[0] == before[0] and after[1] > before[1]


def test_the_rank_index_is_carried_over_changes_it_does_not_hold(client, pro, settings):
    """A change naming only fields the index does not hold (growth, a verification's customers)
    keeps the built index under the new token; one that moves MRR has it rebuilt. Answers
    equal the database's either way."""
    settings.LIST_CACHE_SECONDS = 0
    startups = [make_startup(name=f"Carried {n}", mrr=100 * n) for n in range(1, 11)]
    recorded_write(startups[0])
    built = pagecache.RANK_INDEX.current()
    with transaction.atomic():
        Startup.objects.filter(pk=startups[3].pk).update(growth_30d=12)
        startup_change_record(startup=startups[3], fields=["revenue.growth30d"])
    carried = pagecache.RANK_INDEX.current()
    assert carried[1] is built[1] and carried[0] != built[0]
    assert carried[0] == Generation.objects.get(kind="data").token

    founder_edit(Startup.objects.get(pk=startups[0].pk), mrr=99_000)  # under the review bar
    rebuilt = pagecache.RANK_INDEX.current()
    assert rebuilt[1] is not built[1]
    body = client.get("/api/v1/startups?limit=3", **pro).json()
    assert [s["rank"] for s in body["data"]] == [1, 2, 3]
    assert body["data"][0]["name"] == "Carried 1" and body["meta"]["total"] == 10


def test_an_answer_built_while_a_change_applied_is_kept_unless_that_change_touches_it():
    """AnswerCopies (kept /api/ai and MCP answers): a change applied between a build's token
    and its keeping refuses the answer only when it touches it (a startup shown, or one
    read anew that may join); the answer then serves requests holding either token."""
    checkpoint = rowcopies.Checkpoint(
        lambda after, upto: [(7, upto)] if upto == 11 else [(8, upto)]
    )
    rows = {7: "seven", 8: "eight"}
    copies = rowcopies.AnswerCopies(
        checkpoint,
        max_entries=10,
        seconds=lambda: 60,
        read=lambda ids: {i: rows[i] for i in ids},
    )
    old = checkpoint.stamp("e.10")
    copies.put("list", "kept", old, ids=[1, 2], joins=lambda row: row == "eight")
    assert checkpoint.stamp("e.11") == ("e", 11)  # startup 7: not shown, does not join
    copies.put("built-at-10", "also kept", old, ids=[1], joins=lambda row: row == "eight")
    copies.put("shows-7", "refused", old, ids=[7])
    copies.put("joined-by-7", "refused", old, ids=[1], joins=lambda row: row == "seven")
    assert copies.lookup("list", old) == copies.lookup("list", ("e", 11)) == "kept"
    assert copies.lookup("built-at-10", ("e", 11)) == "also kept"
    assert copies.lookup("shows-7", ("e", 11)) is None
    assert copies.lookup("joined-by-7", ("e", 11)) is None
    checkpoint.stamp("e.12")  # startup 8 joins the list
    assert copies.lookup("list", ("e", 12)) is None


def test_kept_answers_stay_within_their_byte_budget_least_recently_kept_first():
    """AnswerCopies with `max_bytes` (AI_ANSWER_BYTES for /api/ai and MCP): a process keeps
    no more answer bytes than its budget, whatever their count; the oldest go first, an
    answer replaced is counted once, a dropped one gives its bytes back, and one answer
    bigger than the whole budget is not kept (it would evict everything for nothing)."""
    checkpoint = rowcopies.Checkpoint(lambda after, upto: [(3, upto)])
    copies = rowcopies.AnswerCopies(
        checkpoint,
        max_entries=100,
        seconds=lambda: 60,
        read=lambda ids: {},
        max_bytes=1_000,
        size=len,
    )
    stamp = checkpoint.stamp("e.1")
    for n in range(4):
        copies.put(f"a{n}", "x" * 300, stamp, ids=[n])
    assert [copies.lookup(f"a{n}", stamp) is not None for n in range(4)] == [
        False,
        True,
        True,
        True,
    ]
    assert copies.bytes == 900
    copies.put("a3", "y" * 100, stamp, ids=[3])  # replaced: counted once
    assert copies.bytes == 700 and copies.lookup("a3", stamp) == "y" * 100
    copies.put("huge", "z" * 1_001, stamp, ids=[9])
    assert copies.lookup("huge", stamp) is None and copies.bytes == 700
    checkpoint.stamp("e.2")  # startup 3 changed: its answer and its bytes go
    assert copies.lookup("a3", checkpoint.stamp("e.2")) is None
    assert copies.bytes == 600 and len(copies) == 2


def test_a_shared_answer_holds_only_while_no_change_applied_since_may_change_it():
    """`AnswerCopies.current` (shared /api/ai and MCP answers, filed under the epoch): an answer
    another process built after a stamp serves here while the changes this process applied
    since leave it as it is; a change to a startup it shows, one that may join it, another
    epoch, or a stamp older than what this process remembers changes from refuse it."""
    checkpoint = rowcopies.Checkpoint(lambda after, upto: [(7, upto)])
    rows = {7: "seven"}
    copies = rowcopies.AnswerCopies(
        checkpoint, max_entries=10, seconds=lambda: 60, read=lambda ids: {i: rows[i] for i in ids}
    )
    copies.put("joins", "kept", checkpoint.stamp("e.10"), ids=[1], joins=lambda row: False)
    assert checkpoint.stamp("e.11") == ("e", 11)  # startup 7 changed
    built = ("e", 10)
    assert copies.current(built, ids=[1, 2], joins=None)
    assert copies.current(built, ids=[1], joins=lambda row: row == "eight")
    assert not copies.current(built, ids=[7], joins=None)  # shows the changed startup
    assert not copies.current(built, ids=[1], joins=lambda row: row == "seven")  # it may join
    assert not copies.current(built, ids=None, joins=None)  # follows every change
    assert copies.current(("e", 11), ids=[7], joins=None)  # built after the change
    assert not copies.current(("f", 11), ids=[1], joins=None)  # another epoch

    fresh = rowcopies.Checkpoint(lambda after, upto: [])
    other = rowcopies.AnswerCopies(fresh, max_entries=10, seconds=lambda: 60, read=lambda ids: {})
    assert fresh.stamp("e.11") == ("e", 11)  # a process started at sequence 11
    assert not other.current(built, ids=[1], joins=None)  # what came before 11: unknown here
    assert other.current(("e", 11), ids=[1], joins=None)
