"""What one sync costs the database (issue "Fast while the data moves"): the refresh worker
syncs every verified startup each hour (~111 a second at 1,000,000), and most syncs change
nothing, so their statements are counted here; and a sync that moves the figures and the
growth records them as one change."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection as db
from django.test.utils import CaptureQueriesContext

from startups.models import Change, RevenueSnapshot, Startup
from tests.support.factories import make_startup
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.providers.demo import SUBSCRIPTIONS, Recipe
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
RECIPE = Recipe(
    seed=7, level=4000, start=date(2025, 3, 1), plateau=date(2026, 6, 1), kind=SUBSCRIPTIONS
)


def demo_connected() -> ProviderConnection:
    startup = make_startup("Acme", slug="acme")
    return provider_connection_connect(startup=startup, provider="demo", raw_key=RECIPE.key())


def loaded(connection: ProviderConnection) -> ProviderConnection:
    """The connection as the refresh worker reads it before a sync."""
    return ProviderConnection.objects.select_related("startup").get(pk=connection.pk)


def statements(sync) -> list[str]:
    with CaptureQueriesContext(db) as captured:
        sync()
    # The test's own transaction turns the sync's into savepoints: not the sync's cost.
    return [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_a_sync_that_changes_nothing_sends_a_few_statements_and_reads_nothing_back():
    connection = demo_connected()
    revenue_sync(connection=loaded(connection), now=NOW)
    again = loaded(connection)
    later = NOW + timedelta(minutes=5)
    start = Change.objects.order_by("-id").values_list("id", flat=True).first()

    sent = statements(lambda: revenue_sync(connection=again, now=later))

    # The lease; then in one transaction the bookkeeping (which also ends the lease), one read
    # of the stored figures with their monthly rows, the time stamp, the day's snapshot and
    # its growth (read, and kept unless it moved), and the stamp that tells every server to
    # read this startup's new sync time beside its kept copies (the "fresh" token's row
    # locked, the stamp naming the startup, the token: core/beside.py): no re-read of the
    # connection or the startup. On PostgreSQL the token's write also notifies the other
    # servers in the same statement (`pg_notify`, delivered at commit).
    assert len(sent) == 10, sent
    assert any("openstartup_freshstamp" in sql for sql in sent), sent
    assert any("openstartup_generation" in sql for sql in sent), sent
    assert not Change.objects.filter(id__gt=start).exists()
    with CaptureQueriesContext(db) as after:  # what the caller reads of the result is current
        assert (again.status, again.last_synced_at, again.last_error) == ("ok", later, None)
        assert (again.lease_owner, again.lease_until) == (None, None)
        assert again.startup.slug == "acme"
    assert after.captured_queries == []
    stored = ProviderConnection.objects.get(pk=connection.pk)
    assert (stored.last_synced_at, stored.lease_owner, stored.status) == (later, None, "ok")
    assert RevenueSnapshot.objects.get(startup__slug="acme").synced_at == later


def test_a_sync_that_moves_figures_and_growth_records_one_change():
    connection = demo_connected()
    startup = connection.startup
    # A snapshot 40 days back with another MRR: today's sync gives the startup a growth.
    RevenueSnapshot.objects.create(
        startup=startup, date=date(2026, 10, 11), provider="demo", mrr=1000, arr=12000,
        customers=10, last_30_days=900, total_revenue=9000, synced_at=NOW - timedelta(days=40),
    )  # fmt: skip
    start = Change.objects.order_by("-id").values_list("id", flat=True).first() or 0

    revenue_sync(connection=loaded(connection), now=NOW)

    changes = list(Change.objects.filter(id__gt=start).values_list("fields", flat=True))
    assert len(changes) == 1, changes
    assert {"revenue.growth30d", "revenue.mrr", "verification"} <= set(changes[0])
    mrr = Startup.objects.get(pk=startup.pk).mrr
    assert Startup.objects.get(pk=startup.pk).growth_30d == round((mrr - 1000) / 1000, 4)


def test_growth_from_a_sync_dated_before_a_later_snapshot_reads_the_latest_one():
    """A sync dated in the past (a backfill) leaves the growth to the latest snapshot, as the
    snapshot record computes it."""
    connection = demo_connected()
    revenue_sync(connection=loaded(connection), now=NOW)
    growth = Startup.objects.get(slug="acme").growth_30d
    revenue_sync(connection=loaded(connection), now=NOW - timedelta(days=45))
    assert Startup.objects.get(slug="acme").growth_30d != growth
    assert RevenueSnapshot.objects.filter(startup__slug="acme").count() == 2


def test_a_sync_whose_lease_was_taken_over_stores_nothing_and_leaves_that_lease(monkeypatch):
    """The bookkeeping's UPDATE ends the lease in the storing transaction, so it stores only
    while the lease is still this sync's: one that ran out and was taken by another sync
    (whose fetch is newer) leaves the figures and the new holder's lease alone."""
    from verification import services

    connection = demo_connected()
    original = services.figures_in_usd

    def taken_over(figures):
        ProviderConnection.objects.filter(pk=connection.pk).update(lease_owner="other")
        return original(figures)

    monkeypatch.setattr(services, "figures_in_usd", taken_over)
    revenue_sync(connection=loaded(connection), now=NOW)
    stored = ProviderConnection.objects.get(pk=connection.pk)
    assert (stored.lease_owner, stored.last_synced_at) == ("other", None)
    assert Startup.objects.get(slug="acme").mrr is None
