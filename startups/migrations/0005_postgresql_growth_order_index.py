"""The `sort=growth-desc` order (`growth_30d DESC NULLS LAST, lower(name), slug`) as a b-tree on
PostgreSQL, partial on `is_published` like the other list orders (0002, 0004): without it every
growth page sorted the whole filtered set (issue 19). INCLUDE (id, name, mrr) lets an MRR range
and the page's ids come from the index alone. SQLite needs nothing."""

from django.db import migrations

NAME = "startup_growth_order"
DEFINITION = (
    "(growth_30d DESC NULLS LAST, lower(name), slug) INCLUDE (id, name, mrr) WHERE is_published"
)
TABLE = "startups_startup"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {NAME} ON {TABLE} {DEFINITION}")


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [("startups", "0004_postgresql_change_feed_index")]

    operations = [migrations.RunPython(create_index, drop_index, elidable=False)]
