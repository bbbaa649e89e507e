"""The `sort=growth-desc` order (`growth_30d DESC NULLS LAST, lower(name), slug`) as a b-tree on
PostgreSQL, partial on `is_published` like the other list orders (0002, 0004): without it every
growth page sorted the whole filtered set (issue 19). INCLUDE (id, name, mrr) lets an MRR range
and the page's ids come from the index alone. SQLite needs nothing."""

from django.db import migrations

from startups.migrations._postgresql import postgresql_indexes

NAME = "startup_growth_order"
DEFINITION = (
    "(growth_30d DESC NULLS LAST, lower(name), slug) INCLUDE (id, name, mrr) WHERE is_published"
)


class Migration(migrations.Migration):
    dependencies = [("startups", "0004_postgresql_change_feed_index")]

    operations = [postgresql_indexes([(NAME, DEFINITION)])]
