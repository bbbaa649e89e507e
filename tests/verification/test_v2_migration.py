"""Figures stored before methodology v2 say `v1` after the migration: the stored
figures keep the version they were computed with until the next sync recomputes them."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = ("startups", "0005_postgresql_growth_order_index")
AFTER = ("startups", "0006_h33_methodology_version")


@pytest.mark.django_db(transaction=True)
def test_figures_stored_before_v2_are_marked_v1_and_new_ones_v2():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    startup = old.get_model("startups", "Startup").objects.create(name="Old", slug="old")
    old.get_model("startups", "Verification").objects.create(
        startup=startup,
        provider="stripe",
        verified_at=timezone.now(),
        total_revenue=10,
        last_30_days=1,
        customers=1,
    )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([AFTER])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the current models' columns
    from startups.models import Startup, Verification

    assert Verification.objects.get(startup__slug="old").methodology_version == "v1"
    fresh = Startup.objects.create(name="New", slug="new")
    created = Verification.objects.create(
        startup=fresh,
        provider="stripe",
        verified_at=timezone.now(),
        total_revenue=0,
        last_30_days=0,
        customers=0,
    )
    assert created.methodology_version == "v2"
