"""seed_demo and import_startups, through call_command as an operator runs them."""

import json
import os
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from demo.seed import seed_demo
from startups.aiselectors import ai_enabled_startups
from startups.models import Change, Founder, MonthlyRevenue, RevenueSnapshot, Startup, Verification
from tests.support.factories import make_startup, make_verification, self_reported_revenue
from verification.models import ProviderConnection
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db


def snapshot() -> list[tuple]:
    return list(
        Startup.objects.order_by("slug").values_list("slug", "name", "mrr", "on_sale", "owner_id")
    )


def test_seed_demo_is_deterministic_and_idempotent():
    call_command("seed_demo", count=120, stdout=StringIO())
    first = snapshot()
    months = MonthlyRevenue.objects.count()
    call_command("seed_demo", count=120, stdout=StringIO())
    assert snapshot() == first
    assert Startup.objects.count() == 120
    assert MonthlyRevenue.objects.count() == months


def test_seed_demo_covers_every_kind_of_startup():
    call_command("seed_demo", count=200, stdout=StringIO())
    verified = Verification.objects.select_related("startup")
    # Demo figures come from the `demo` provider through the sync, never under a real
    # provider's name.
    assert set(verified.values_list("provider", flat=True)) == {"demo"}
    assert verified.filter(mrr__isnull=False).exists()
    no_subscription = verified.filter(mrr__isnull=True)
    assert no_subscription.exists()
    assert all(v.total_revenue > 0 and v.startup.mrr is None for v in no_subscription)
    for verification in verified.prefetch_related("monthly"):
        assert 12 <= verification.monthly.count() <= 36
    self_reported = Startup.objects.filter(verification__isnull=True)
    assert self_reported.filter(owner__isnull=False).exists()  # claimed, self-reported
    assert self_reported.filter(owner__isnull=True).exists()  # unclaimed
    assert Startup.objects.filter(mrr__isnull=True, verification__isnull=True).exists()
    assert Startup.objects.filter(on_sale=True, asking_price__isnull=False).exists()
    assert 0 < ai_enabled_startups().count() < 200


def test_seed_demo_if_empty_leaves_existing_data_alone():
    make_startup("Mine", slug="mine")
    out = StringIO()
    call_command("seed_demo", if_empty=True, stdout=out)
    assert Startup.objects.count() == 1
    assert "already present" in out.getvalue()


def write(tmp_path, payload) -> str:
    path = tmp_path / "startups.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return str(path)


def test_import_creates_and_updates_by_slug(tmp_path, client):
    make_startup("Old name", slug="acme", mrr=1)
    path = write(
        tmp_path,
        [
            {
                "name": "Acme",
                "slug": "acme",
                "revenue": {"mrr": 4200, "arr": 50400},
                "founders": [{"name": "Ada"}],
                "socials": [{"platform": "x", "url": "https://x.com/acme"}],
                "onSale": True,
                "askingPrice": 100000,
            },
            {"name": "Brand New Co"},
        ],
    )
    out = StringIO()
    call_command("import_startups", path, stdout=out)
    assert "1 created, 1 updated" in out.getvalue()
    data = client.get("/api/v1/startups/acme").json()["data"]
    assert data["name"] == "Acme"
    assert data["revenue"] == self_reported_revenue(4200)
    assert data["founders"][0]["name"] == "Ada"
    assert data["askingPrice"] == 100000
    assert Startup.objects.get(slug="brand-new-co").mrr is None


def test_import_never_keeps_an_old_verification_for_self_reported_figures(tmp_path):
    startup = make_startup("Acme", slug="acme", mrr=10)
    make_verification(startup)
    call_command("import_startups", write(tmp_path, [{"name": "Acme"}]), stdout=StringIO())
    assert not Verification.objects.filter(startup__slug="acme").exists()


def test_invalid_records_are_reported_by_index_and_nothing_is_imported(tmp_path):
    path = write(
        tmp_path,
        [
            {"name": "Good"},
            {"name": "Bad", "revenue": {"mrr": -5}},
            "not an object",
            {"slug": "no-name"},
            {"name": "Good"},
        ],
    )
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_startups", path, stdout=StringIO(), stderr=err)
    problems = err.getvalue()
    # Records are numbered from 1, as people count them.
    assert "record 2: revenue.mrr:" in problems
    assert "record 3: must be a JSON object" in problems
    assert "record 4: name:" in problems
    assert "record 5: slug 'good' repeats record 1" in problems
    assert "record 0" not in problems
    assert "record 1:" not in problems
    assert Startup.objects.count() == 0
    assert Founder.objects.count() == 0


@pytest.mark.parametrize("content", ["{not json", '{"name": "an object, not a list"}'])
def test_unreadable_import_file_is_a_clear_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("import_startups", str(path), stdout=StringIO(), stderr=StringIO())
    assert Startup.objects.count() == 0


def _schema_objects() -> set[tuple[str, str]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'index', indexname FROM pg_indexes WHERE tablename LIKE 'startups_%%' "
            "UNION SELECT 'fk', conname FROM pg_constraint WHERE contype = 'f'"
        )
        return set(cursor.fetchall())


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="PostgreSQL bulk path"
)
@pytest.mark.parametrize("rebuilt_from", [200_000, 1], ids=["indexes kept", "indexes rebuilt"])
def test_a_reseed_over_existing_rows_keeps_every_index_and_foreign_key(monkeypatch, rebuilt_from):
    # A large load builds the indexes again after its rows (demo/bulk.py): the same ones.
    monkeypatch.setattr("demo.bulk.REBUILD_INDEXES_FROM", rebuilt_from)
    before = _schema_objects()
    assert ("index", "startup_name_trgm") in before
    owned = make_startup("Kept Apart", slug="kept-apart", mrr=5)
    make_verification(owned)
    call_command("seed_demo", count=60, stdout=StringIO())
    call_command("seed_demo", count=60, stdout=StringIO())
    assert _schema_objects() == before
    assert Startup.objects.filter(slug="kept-apart").exists()  # not a demo slug: untouched
    assert Startup.objects.count() == 61


def _demo_state() -> list[tuple]:
    return list(
        Startup.objects.order_by("slug").values_list(
            "slug",
            "mrr",
            "growth_30d",
            "verification__provider",
            "verification__total_revenue",
            "verification__customers",
            "provider_connection__status",
        )
    )


def test_a_sync_of_the_seeded_demo_startups_finds_nothing_to_change():
    """seed_demo writes in bulk exactly what one sync per demo startup writes: syncing every
    connection afterwards changes no figure, no month and records no visible change."""
    now = timezone.now()
    seed_demo(60, now=now)
    loaded = _demo_state()
    snapshots = RevenueSnapshot.objects.count()
    months = list(MonthlyRevenue.objects.order_by("id").values_list("month", "gross", "refunds"))
    last_change = Change.objects.order_by("-id").values_list("id", flat=True).first()
    connections = ProviderConnection.objects.select_related("startup")
    assert connections.count() > 10
    for connection in connections:
        revenue_sync(connection=connection, now=now)
    assert _demo_state() == loaded
    assert RevenueSnapshot.objects.count() == snapshots
    assert list(MonthlyRevenue.objects.order_by("id").values_list("month", "gross", "refunds")) == (
        months
    )
    assert not Change.objects.filter(id__gt=last_change).exists()


def test_the_bench_loads_the_dataset_seed_demo_loads():
    from bench.seed import seed

    call_command("seed_demo", count=60, stdout=StringIO())
    seeded = _demo_state()
    assert seed(60) == 60
    assert _demo_state() == seeded
