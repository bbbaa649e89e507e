"""The change feed's order (`sort=updated-desc`: `updated_at DESC, slug`) as a b-tree on
PostgreSQL, partial on `is_published` like the other list orders (0002): its pages and cursor
seeks (`updated_at < x OR (updated_at = x AND slug > y)`) are index walks with no sort, and
`updatedSince` is a range on the same index. SQLite needs nothing."""

from django.db import migrations

NAME = "startup_updated_order"
DEFINITION = "(updated_at DESC, slug) INCLUDE (id, name, mrr) WHERE is_published"
TABLE = "startups_startup"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {NAME} ON {TABLE} {DEFINITION}")


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [("startups", "0003_revenue_snapshots_and_growth")]

    operations = [migrations.RunPython(create_index, drop_index, elidable=False)]
