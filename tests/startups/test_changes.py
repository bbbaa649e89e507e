"""The change sequence (startups/changes.py): every registered write path records its change in
the write's own transaction, a write that changes nothing visible records nothing, and sequence
numbers are committed in order."""

import json
import re
import threading
import time
from datetime import UTC, date, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction

from core import readcache
from founders.models import PendingChange, StartupClaim
from founders.reviews import pending_changes_approve, pending_changes_reject
from founders.services import (
    claims_approve,
    startup_create,
    startup_disconnect,
    startup_update,
)
from startups.changes import WRITE_PATHS, change_of, startups_change_record
from startups.history import revenue_snapshot_record
from startups.models import Change, RevenueSnapshot, Startup
from tests.support.admin import admin_form, operator_client
from tests.support.factories import PROFILE, make_account, make_startup, make_verification
from tests.support.verification_fakes import stripe_connected
from verification.connections import provider_connection_disconnect
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def token() -> str | None:
    return readcache.current("data")


def changes_after(last: int) -> list[tuple[str, str, list]]:
    rows = Change.objects.filter(id__gt=last).order_by("id")
    return [(row.kind, row.slug, row.fields) for row in rows]


def last_id() -> int:
    return Change.objects.order_by("-id").values_list("id", flat=True).first() or 0


# --- every registered write path, driven for real --------------------------------------------


def drive_startup_create(**_):
    startup_create(owner=make_account(), profile=PROFILE, mrr=100)
    return [("created", "acme", [])]


def drive_startup_update(**_):
    startup = make_startup("Acme", slug="acme", owner=make_account())
    startup_update(startup=startup, profile={**PROFILE, "name": "Acme 2"}, mrr=200)
    # A founder's save lists the fields it changed (the headline too while unverified).
    written = ["category", "name", "revenue.arr", "revenue.mrr", "website"]
    return [("updated", "acme", written)]


def drive_claims_approve(**_):
    startup = make_startup("Acme", slug="acme")
    StartupClaim.objects.create(startup=startup, account=make_account())
    assert claims_approve(claims=StartupClaim.objects.all()) == 1
    return [("updated", "acme", ["owner"])]


def drive_startup_disconnect(**_):
    startup = make_startup("Acme", slug="acme", mrr=10)
    make_verification(startup)
    startup_disconnect(startup=startup)
    return [("updated", "acme", ["revenue", "verification"])] * 2


def drive_revenue_sync(fake_providers, **_):
    connection = stripe_connected(fake_providers)
    start = last_id()
    revenue_sync(connection=connection, now=NOW)
    got = changes_after(start)
    assert got[0][:2] == ("updated", "acme")
    assert {"revenue.mrr", "revenue.verified", "verification"} <= set(got[0][2])
    return None


def _held_mrr(slug: str) -> PendingChange:
    """A founder's MRR above the review threshold, held for an operator."""
    startup = make_startup("Acme", slug=slug, mrr=10)
    startup.owner = make_account()
    startup.save(update_fields=["owner"])
    startup_update(startup=startup, profile=PROFILE | {"name": startup.name}, mrr=10**9)
    return PendingChange.objects.get(startup=startup, status=PendingChange.Status.PENDING)


def drive_pending_changes_approve(**_):
    held = _held_mrr("acme")
    start = last_id()
    pending_changes_approve(changes=PendingChange.objects.filter(pk=held.pk), now=NOW)
    assert Startup.objects.get(slug="acme").mrr == 10**9
    assert [row[:2] for row in changes_after(start)] == [("updated", "acme")]
    return None


def drive_pending_changes_reject(**_):
    held = _held_mrr("acme")
    start = last_id()
    pending_changes_reject(changes=PendingChange.objects.filter(pk=held.pk), now=NOW)
    assert Startup.objects.get(slug="acme").mrr == 10
    assert [row[:2] for row in changes_after(start)] == [("updated", "acme")]
    return None


def drive_provider_connection_disconnect(**_):
    startup = make_startup("Acme", slug="acme", mrr=10)
    make_verification(startup)
    provider_connection_disconnect(startup=startup)
    return [("updated", "acme", ["revenue", "verification"])]


def drive_revenue_snapshot_record(**_):
    startup = make_startup("Acme", slug="acme", mrr=200)
    make_verification(startup)
    RevenueSnapshot.objects.create(
        startup=startup,
        date=date(2026, 10, 1),
        synced_at=datetime(2026, 10, 1, tzinfo=UTC),
        provider="stripe",
        mrr=100,
        arr=1200,
        total_revenue=0,
        last_30_days=0,
        customers=1,
    )
    start = last_id()
    revenue_snapshot_record(startup=startup, now=NOW)
    assert changes_after(start) == [("updated", "acme", ["revenue.growth30d"])]
    start = last_id()
    revenue_snapshot_record(startup=startup, now=NOW + timedelta(hours=1))  # growth unchanged
    assert changes_after(start) == []
    return None


def drive_admin_save(client, **_):
    operator = operator_client(client)
    assert operator.post("/admin/startups/startup/add/", admin_form()).status_code == 302
    return [("created", "acme", [])]


def drive_admin_edit(client, **_):
    startup = make_startup("Acme", slug="acme")
    url = f"/admin/startups/startup/{startup.pk}/change/"
    operator_client(client)
    assert client.post(url, admin_form(name="Acme Two")).status_code == 302
    assert client.post(url, admin_form(name="Acme Two", is_published=None)).status_code == 302
    assert client.post(url, admin_form(name="Acme Two")).status_code == 302
    assert client.post(url, admin_form(name="Acme Two", slug="acme-2")).status_code == 302
    return [
        ("updated", "acme", ["name"]),
        ("unpublished", "acme", ["isPublished"]),
        ("updated", "acme", ["isPublished"]),
        ("deleted", "acme", []),
        ("created", "acme-2", []),
    ]


def drive_admin_delete(client, **_):
    startup = make_startup("Acme", slug="acme")
    operator_client(client)
    response = client.post(f"/admin/startups/startup/{startup.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    return [("deleted", "acme", [])]


def drive_admin_delete_queryset(client, **_):
    ids = [make_startup(slug=slug).pk for slug in ("a-1", "a-2")]
    operator_client(client)
    data = {"action": "delete_selected", "_selected_action": ids, "post": "yes"}
    assert client.post("/admin/startups/startup/", data).status_code == 302
    return [("deleted", "a-1", []), ("deleted", "a-2", [])]


def drive_import(tmp_path, **_):
    make_startup("Old", slug="acme")
    path = tmp_path / "startups.json"
    path.write_text(json.dumps([{"name": "Acme", "slug": "acme"}, {"name": "Beta"}]))
    call_command("import_startups", str(path), stdout=StringIO())
    return [("updated", "acme", []), ("created", "beta", [])]


def drive_seed_demo(**_):
    call_command("seed_demo", "--count", "3", stdout=StringIO())
    kinds = {kind for kind, _, _ in changes_after(0)}
    assert "created" in kinds
    assert Change.objects.filter(kind="created").count() == 3
    return None


SCENARIOS = {
    "founders.services.startup_create": drive_startup_create,
    "founders.services.startup_update": drive_startup_update,
    "founders.services.claims_approve": drive_claims_approve,
    "founders.services.startup_disconnect": drive_startup_disconnect,
    "founders.reviews.pending_changes_approve": drive_pending_changes_approve,
    "founders.reviews.pending_changes_reject": drive_pending_changes_reject,
    "verification.services.revenue_sync": drive_revenue_sync,
    "verification.connections.provider_connection_disconnect": drive_provider_connection_disconnect,
    "startups.history.revenue_snapshot_record": drive_revenue_snapshot_record,
    "web.admin.StartupAdmin.save_model": drive_admin_save,
    "web.admin.StartupAdmin.save_related": drive_admin_edit,
    "web.admin.StartupAdmin.delete_model": drive_admin_delete,
    "web.admin.StartupAdmin.delete_queryset": drive_admin_delete_queryset,
    "startups.imports.startups_import": drive_import,
    "demo.seed.seed_demo": drive_seed_demo,
}


def test_every_registered_write_path_has_a_scenario():
    assert set(SCENARIOS) == set(WRITE_PATHS)


@pytest.mark.parametrize("path", WRITE_PATHS)
def test_each_write_path_records_its_change_and_replaces_the_token(
    path, client, fake_providers, tmp_path
):
    start, before = last_id(), token()
    expected = SCENARIOS[path](client=client, fake_providers=fake_providers, tmp_path=tmp_path)
    assert last_id() > start, f"{path} wrote no Change row"
    assert token() != before
    if expected is not None:
        assert changes_after(start) == expected
    for change in Change.objects.filter(id__gt=start):
        assert change.at is not None and change.startup_id > 0


def test_no_module_but_the_change_service_replaces_the_data_token():
    """The token and the sequence move together: a write path that bumped the token by itself
    would change what readers see without a Change row."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in {"tests", ".venv", "node_modules", "clients"}:
            continue
        if rel in {"core/readcache.py", "startups/changes.py"}:
            continue
        if re.search(r"""bump\(\s*["']data["']\s*\)""", path.read_text(encoding="utf-8")):
            offenders.append(rel)
    assert offenders == []


def test_a_sync_that_changes_nothing_visible_writes_no_change_and_keeps_the_token(
    fake_providers,
):
    connection = stripe_connected(fake_providers)
    revenue_sync(connection=connection, now=NOW)
    connection.refresh_from_db()
    start, before = last_id(), token()
    updated_at = Startup.objects.get(slug="acme").updated_at
    revenue_sync(connection=connection, now=NOW + timedelta(minutes=5))
    assert last_id() == start
    assert token() == before
    assert Startup.objects.get(slug="acme").updated_at == updated_at
    connection.refresh_from_db()
    assert connection.status == "ok"
    assert connection.last_synced_at == NOW + timedelta(minutes=5)


def test_a_sync_that_ends_a_refused_status_records_the_status_change(fake_providers):
    connection = stripe_connected(fake_providers)
    revenue_sync(connection=connection, now=NOW)
    fake_providers.revoke("rk_live_feed1")
    start = last_id()
    revenue_sync(connection=connection, now=NOW + timedelta(minutes=5))
    assert changes_after(start) == [("updated", "acme", ["verification.status"])]
    start = last_id()
    revenue_sync(connection=connection, now=NOW + timedelta(minutes=10))  # still revoked
    assert changes_after(start) == []


def test_a_rolled_back_write_leaves_no_change_and_the_token():
    startup = make_startup("Acme", slug="acme", owner=make_account())
    start, before = last_id(), token()
    with pytest.raises(RuntimeError), transaction.atomic():
        startup_update(startup=startup, profile=PROFILE, mrr=5)
        raise RuntimeError("the rest of the write failed")
    assert last_id() == start
    assert token() == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL sequence order")
def test_sequence_numbers_are_committed_in_order():
    """Two writers: the first takes a sequence number and holds its transaction open; the
    second waits for the lock, so its higher number is never visible before the lower one."""
    a, b = make_startup(slug="first"), make_startup(slug="second")
    inserted, release, seen = threading.Event(), threading.Event(), {}

    def first() -> None:
        with transaction.atomic():
            startups_change_record([change_of(a)])
            inserted.set()
            release.wait(10)
        connections.close_all()

    def second() -> None:
        with transaction.atomic():
            startups_change_record([change_of(b)])
        seen["second_done"] = time.monotonic()
        connections.close_all()

    one = threading.Thread(target=first)
    one.start()
    assert inserted.wait(10)
    two = threading.Thread(target=second)
    two.start()
    time.sleep(0.5)
    assert "second_done" not in seen  # waiting for the first to commit
    assert not Change.objects.filter(slug="second").exists()
    release.set()
    one.join(10)
    two.join(10)
    ids = dict(Change.objects.values_list("slug", "id"))
    assert ids["first"] < ids["second"]


@pytest.mark.django_db(transaction=True)
def test_the_admin_bulk_delete_records_tombstones_outside_a_test_transaction(client):
    """The changelist's delete action runs in no transaction of its own (unlike the forms):
    the tombstones must still be written with the deletion, not refused."""
    ids = [make_startup(slug=slug).pk for slug in ("b-1", "b-2")]
    operator_client(client)
    data = {"action": "delete_selected", "_selected_action": ids, "post": "yes"}
    assert client.post("/admin/startups/startup/", data).status_code == 302
    assert not Startup.objects.filter(pk__in=ids).exists()
    assert list(Change.objects.values_list("kind", "slug")) == [
        ("deleted", "b-1"),
        ("deleted", "b-2"),
    ]
