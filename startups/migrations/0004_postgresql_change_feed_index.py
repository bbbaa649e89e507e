"""The change feed's order (`sort=updated-desc`: `updated_at DESC, slug`) as a b-tree on
PostgreSQL, partial on `is_published` like the other list orders (0002): its pages and cursor
seeks (`updated_at < x OR (updated_at = x AND slug > y)`) are index walks with no sort, and
`updatedSince` is a range on the same index. SQLite needs nothing."""

from django.db import migrations

from startups.migrations._postgresql import postgresql_indexes

NAME = "startup_updated_order"
DEFINITION = "(updated_at DESC, slug) INCLUDE (id, name, mrr) WHERE is_published"


class Migration(migrations.Migration):
    dependencies = [("startups", "0003_revenue_snapshots_and_growth")]

    operations = [postgresql_indexes([(NAME, DEFINITION)])]
