"""Invalidation has one mechanism (core/invalidation.py): every write to a model an app
registered replaces its kind's token, bulk writes included, so no cached copy outlives a write
whatever path the write took (a save, `QuerySet.update`, `bulk_create`, `QuerySet.delete`,
through any manager). Writes that change nothing any copy holds keep the copies."""

import logging
from datetime import date, timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from apikeys.models import ApiKey
from core import invalidation, readcache, rowcopies
from startups.changes import change_of, startups_change_record
from startups.models import RevenueSnapshot, Startup, Verification
from tests.support.factories import (
    make_founder,
    make_pro_key,
    make_social,
    make_startup,
    make_verification,
)
from verification.models import ProviderConnection

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("read_cache_on")]
KINDS = readcache.KINDS

COPIES = {kind: readcache.LocalCache(kind, max_entries=10) for kind in readcache.KINDS}
REGISTERED = [(kind, model) for kind in readcache.KINDS for model in invalidation.registered(kind)]


@pytest.fixture
def world(db):
    """One row of every registered model."""
    key, _ = make_pro_key()
    startup = make_startup("Acme", slug="acme", mrr=100, owner=key.account)
    make_founder(startup)
    make_social(startup)
    make_verification(startup, months=[(date(2026, 10, 1), 120, 20)])
    RevenueSnapshot.objects.create(
        startup=startup,
        date=date(2026, 11, 1),
        synced_at=timezone.now(),
        mrr=100,
        arr=1200,
        customers=3,
        last_30_days=90,
        total_revenue=900,
    )
    ProviderConnection.objects.create(startup=startup, provider="stripe", encrypted_key="x")
    return startup


def kept(kind: str) -> None:
    COPIES[kind].put("copy", "before the write", COPIES[kind].token())


def served(kind: str) -> bool:
    return "copy" in COPIES[kind].lookup(["copy"])[0]


def a_field_copies_show(kind: str, model) -> str:
    ignored = invalidation.REGISTRY[kind][model][0]
    for field in model._meta.concrete_fields:
        if not field.primary_key and not field.generated and field.name not in ignored:
            return field.name
    raise AssertionError(f"{model._meta.label} has no field a copy shows")


def bulk_update(kind, model, row):
    name = a_field_copies_show(kind, model)
    model.objects.filter(pk=row.pk).update(**{name: F(name)})


def bulk_create(kind, model, row):
    if not invalidation.REGISTRY[kind][model][2]:
        pytest.skip("a new row of it is in no copy until a later write says so")
    model.objects.bulk_create([row], ignore_conflicts=True)


def bulk_delete(kind, model, row):
    model.objects.filter(pk=row.pk).delete()


@pytest.mark.parametrize("write", [bulk_update, bulk_create, bulk_delete])
@pytest.mark.parametrize(
    ("kind", "model"), REGISTERED, ids=[f"{k}-{m._meta.label}" for k, m in REGISTERED]
)
def test_no_bulk_write_of_a_registered_model_leaves_a_copy_served(
    world, kind, model, write, django_capture_on_commit_callbacks
):
    row = model.objects.first()
    kept(kind)
    assert served(kind)
    with django_capture_on_commit_callbacks(execute=True):  # the write's transaction commits
        write(kind, model, row)
    assert not served(kind)


def test_every_model_copies_are_made_of_is_registered():
    """What the surfaces show: keys, plans and accounts; startups and all they hold."""
    labels = {
        kind: {m._meta.label for m in invalidation.registered(kind)} for kind in ("auth", "data")
    }
    assert labels["auth"] == {"apikeys.ApiKey", "apikeys.Subscription", "accounts.User"}
    assert labels["data"] == {
        "startups.Startup",
        "startups.Founder",
        "startups.Social",
        "startups.Verification",
        "startups.MonthlyRevenue",
        "startups.RevenueSnapshot",
        "verification.ProviderConnection",
        "accounts.User",
    }


def test_a_bulk_write_through_a_related_manager_is_caught(
    world, django_capture_on_commit_callbacks
):
    kept("data")
    with django_capture_on_commit_callbacks(execute=True):
        world.founders.update(name="Grace Hopper")
    assert not served("data")


def test_a_write_path_that_forgets_its_bump_is_caught_at_commit(
    client, world, caplog, django_capture_on_commit_callbacks
):
    key, raw = make_pro_key()
    headers = {"HTTP_X_API_KEY": raw}
    assert client.get("/api/v1/startups/acme", **headers).json()["data"]["name"] == "Acme"
    with caplog.at_level(logging.ERROR, logger="core.invalidation"):
        with django_capture_on_commit_callbacks(execute=True):
            Startup.objects.filter(slug="acme").update(name="Renamed")  # no change recorded
    assert client.get("/api/v1/startups/acme", **headers).json()["data"]["name"] == "Renamed"
    assert "startups.Startup" in caplog.text


def test_an_itemised_write_keeps_the_epoch_and_logs_nothing(
    world, caplog, django_capture_on_commit_callbacks
):
    """The change service's bump settles the transaction's bulk writes: copies of other
    startups stay (same epoch), and nothing is reported."""
    epoch = rowcopies.parse(readcache.current("data"))[0]
    with caplog.at_level(logging.ERROR, logger="core.invalidation"):
        with django_capture_on_commit_callbacks(execute=True):
            Startup.objects.filter(pk=world.pk).update(name="Renamed")
            startups_change_record([change_of(world, fields=["name"])])
    after_epoch, sequence = rowcopies.parse(readcache.current("data"))
    assert (after_epoch, sequence is not None) == (epoch, True)
    assert caplog.text == ""


def test_bookkeeping_writes_keep_every_copy(world, django_capture_on_commit_callbacks):
    """A key's last use, a sync's lease and a no-op sync's stamp change nothing shown."""
    kept("auth")
    kept("data")
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        ApiKey.objects.update(last_used_at=now)
        ProviderConnection.objects.update(lease_owner="me", lease_until=now + timedelta(minutes=1))
        Verification.objects.update(verified_at=now)
    assert served("auth") and served("data")
