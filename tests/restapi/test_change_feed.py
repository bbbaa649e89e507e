"""GET /api/v1/changes: a consumer mirrors the dataset from the feed and keeps it exact through
creations, edits, unpublishing and deletions; cursors are sealed, so forged ones are refused."""

import base64
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from founders.services import startup_create, startup_update
from startups.feed import changes_prune, feed_cursor
from startups.models import Change, Startup
from tests.support.admin import admin_form, operator_client
from tests.support.factories import (
    bearer,
    import_startups,
    make_account,
    make_api_key,
    make_pro_key,
)
from tests.support.verification_fakes import stripe_connected
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


@pytest.fixture
def pro(db) -> dict[str, str]:
    key, raw = make_pro_key()
    return bearer(raw)


def read_feed(client, headers, mirror: dict, cursor: str | None, limit: int = 3) -> str:
    """Apply every entry after `cursor` to `mirror` (slug: list item); the cursor to resume."""
    last = 0
    while True:
        query = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        response = client.get("/api/v1/changes", query, headers=headers)
        assert response.status_code == 200, response.content
        body = response.json()
        for entry in body["data"]:
            assert entry["sequence"] > last  # oldest first, strictly increasing
            last = entry["sequence"]
            if entry["kind"] in ("deleted", "unpublished"):
                assert entry["startup"] is None
                mirror.pop(entry["slug"], None)
            elif entry["startup"] is not None:
                mirror[entry["slug"]] = entry["startup"]
        cursor = body["meta"]["nextCursor"]
        assert cursor
        if not body["meta"]["hasMore"]:
            return cursor


def dataset(client, headers) -> dict:
    """The API's current dataset by slug, through cursor paging of the list."""
    found, cursor = {}, None
    while True:
        query = {"limit": 50, "sort": "name-asc"} | ({"cursor": cursor} if cursor else {})
        body = client.get("/api/v1/startups", query, headers=headers).json()
        found |= {item["slug"]: item for item in body["data"]}
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            return found


def comparable(items: dict) -> dict:
    return {slug: {k: v for k, v in item.items() if k != "rank"} for slug, item in items.items()}


def test_a_mirror_kept_by_the_feed_equals_the_dataset(client, pro, tmp_path, fake_providers):
    import_startups(tmp_path, [{"name": f"Co {n}", "slug": f"co-{n}"} for n in range(6)])
    owner = make_account()
    Startup.objects.filter(slug="co-1").update(owner=owner)
    mirror: dict = {}
    cursor = read_feed(client, pro, mirror, None)
    assert comparable(mirror) == comparable(dataset(client, pro))

    # Creations, edits, new verified figures, unpublishing and deletions.
    startup_create(owner=owner, profile={"name": "Brand New"}, mrr=900)
    startup_update(startup=Startup.objects.get(slug="co-1"), profile={"name": "Co One"}, mrr=77)
    revenue_sync(connection=stripe_connected(fake_providers, slug="co-2"), now=NOW)
    operator_client(client)
    co3 = Startup.objects.get(slug="co-3")
    url = f"/admin/startups/startup/{co3.pk}/change/"
    assert (
        client.post(url, admin_form(name="Co 3", slug="co-3", is_published=None)).status_code == 302
    )
    co4 = Startup.objects.get(slug="co-4")
    assert (
        client.post(f"/admin/startups/startup/{co4.pk}/delete/", {"post": "yes"}).status_code == 302
    )
    import_startups(tmp_path, [{"name": "Co 5 renamed", "slug": "co-5"}])
    client.logout()

    cursor = read_feed(client, pro, mirror, cursor)
    assert comparable(mirror) == comparable(dataset(client, pro))
    assert {"brand-new", "co-1"} <= set(mirror) and not {"co-3", "co-4"} & set(mirror)
    assert mirror["co-2"]["revenue"]["verified"] is True
    assert (mirror["co-1"]["name"], mirror["co-5"]["name"]) == ("Co One", "Co 5 renamed")
    # Caught up: the same cursor again gives nothing new, and still a cursor to poll with.
    again = client.get("/api/v1/changes", {"cursor": cursor}, headers=pro).json()
    assert again["data"] == [] and again["meta"]["hasMore"] is False
    assert again["meta"]["nextCursor"]


def test_a_tombstone_says_what_was_deleted_and_when(client, pro, tmp_path):
    import_startups(tmp_path, [{"name": "Gone", "slug": "gone"}])
    operator_client(client)
    gone = Startup.objects.get(slug="gone")
    client.post(f"/admin/startups/startup/{gone.pk}/delete/", {"post": "yes"})
    client.logout()
    entries = client.get("/api/v1/changes", headers=pro).json()["data"]
    assert [(e["kind"], e["slug"]) for e in entries] == [("created", "gone"), ("deleted", "gone")]
    tombstone = entries[-1]
    assert tombstone["startup"] is None
    assert datetime.fromisoformat(tombstone["changedAt"]) > datetime.now(UTC) - timedelta(minutes=1)
    assert tombstone["changedAt"].endswith("Z") and len(tombstone["changedAt"]) == 24
    # The created entry of a startup deleted since carries no startup either.
    assert entries[0]["startup"] is None


def forged(payload) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")


@pytest.mark.parametrize("path", ["/api/v1/changes", "/api/v1/startups"])
@pytest.mark.parametrize(
    "cursor",
    ["not-a-cursor", "%%%", "x" * 5000, forged([0]), forged(["mrr-desc", "a", "a", 5, None, None])],
)
def test_a_cursor_the_server_did_not_issue_is_refused_everywhere(client, path, cursor):
    response = client.get(path, {"cursor": cursor, "limit": "garbage"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_cursor"


def test_a_tampered_or_borrowed_cursor_is_refused(client, pro, tmp_path):
    import_startups(tmp_path, [{"name": f"Co {n}", "slug": f"co-{n}"} for n in range(3)])
    issued = client.get("/api/v1/changes", {"limit": 1}, headers=pro).json()["meta"]["nextCursor"]
    raw = bytearray(base64.urlsafe_b64decode(issued + "=" * (-len(issued) % 4)))
    raw[1] ^= 1  # one bit of the place changed
    tampered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    assert client.get("/api/v1/changes", {"cursor": tampered}).status_code == 400
    # A feed cursor is not a list cursor, nor the other way round.
    assert client.get("/api/v1/startups", {"cursor": issued}).status_code == 400
    listed = client.get("/api/v1/startups", {"limit": 1}).json()["meta"]["nextCursor"]
    assert client.get("/api/v1/changes", {"cursor": listed}).status_code == 400
    # The issued one works, and an empty cursor is no cursor.
    assert client.get("/api/v1/changes", {"cursor": issued}).status_code == 200
    assert client.get("/api/v1/changes", {"cursor": ""}).status_code == 200


def test_pages_checkpoint_without_repeats_or_gaps(client, pro, tmp_path):
    import_startups(tmp_path, [{"name": f"Co {n}", "slug": f"co-{n}"} for n in range(7)])
    seen, cursor = [], None
    while True:
        query = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        body = client.get("/api/v1/changes", query, headers=pro).json()
        seen += [entry["sequence"] for entry in body["data"]]
        cursor = body["meta"]["nextCursor"]
        if not body["meta"]["hasMore"]:
            break
    assert seen == list(Change.objects.order_by("id").values_list("id", flat=True))


def test_pruning_keeps_90_days_and_an_older_cursor_expires(client, pro, tmp_path, settings):
    assert settings.CHANGE_RETENTION_DAYS == 90
    import_startups(tmp_path, [{"name": f"Co {n}", "slug": f"co-{n}"} for n in range(4)])
    ids = list(Change.objects.order_by("id").values_list("id", flat=True))
    old = datetime.now(UTC) - timedelta(days=91)
    Change.objects.filter(id__in=ids[:3]).update(at=old)
    assert changes_prune() == 2  # the newest pruned-age row stays as the marker
    assert list(Change.objects.order_by("id").values_list("id", flat=True)) == ids[2:]
    expired = client.get("/api/v1/changes", {"cursor": feed_cursor(ids[0])}, headers=pro)
    assert expired.status_code == 410
    assert expired.json()["error"]["code"] == "cursor_expired"
    fine = client.get("/api/v1/changes", {"cursor": feed_cursor(ids[1])}, headers=pro)
    assert [e["sequence"] for e in fine.json()["data"]] == ids[2:]


def test_free_callers_spend_one_record_per_entry_with_a_startup(client, tmp_path):
    key, raw = make_api_key()
    import_startups(tmp_path, [{"name": "Gone", "slug": "gone"}, {"name": "Kept", "slug": "kept"}])
    Startup.objects.filter(slug="gone").delete()
    Change.objects.create(
        startup_id=1, slug="gone", kind="deleted", fields=[], at=datetime.now(UTC)
    )
    body = client.get("/api/v1/changes", headers=bearer(raw)).json()
    assert [e["kind"] for e in body["data"]] == ["created", "created", "deleted"]
    assert body["meta"]["quota"]["used"] == 1  # only "kept" carried a startup


@pytest.mark.django_db(transaction=True)
def test_startups_published_before_the_sequence_existed_are_in_the_feed(client):
    """A database migrated from before the change sequence: its published startups get one
    `created` entry each, so a consumer reading the feed from the start gets them all."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = ("startups", "0009_change_sequence"), ("startups", "0010_change_backfill")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps.get_model("startups", "Startup")
    old.objects.create(name="Old", slug="old")
    old.objects.create(name="Hidden", slug="hidden", is_published=False)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([after])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    key, raw = make_pro_key()
    body = client.get("/api/v1/changes", headers=bearer(raw)).json()
    assert [(e["kind"], e["slug"]) for e in body["data"]] == [("created", "old")]
    assert body["data"][0]["startup"]["name"] == "Old"
