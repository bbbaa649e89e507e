"""Indexes that keep every list query fast at 100,000 startups, on PostgreSQL only.

They match the SQL Django compiles, expression for expression, or the planner ignores them:

- `q` and `category` use `icontains`, which Django compiles on PostgreSQL to
  `UPPER("col"::text) LIKE UPPER(%s)`: trigram GIN indexes (pg_trgm) on exactly
  `UPPER(col::text)` serve those `%text%` patterns (the OR of three columns becomes a BitmapOr).
- Every sort has a b-tree in its exact ORDER BY, partial on `is_published` (every list query
  filters on it), so a page is an index walk with no sort:
  rank / `mrr-desc`: `mrr DESC NULLS LAST, lower(name), slug`; `mrr-asc`: `mrr ASC NULLS LAST,
  lower(name), slug`; `name-asc` / `name-desc`: `(mrr IS NULL), lower(name), slug` (and DESC).
  INCLUDE (id, name, mrr) lets the rank and name walks run as index-only scans (PostgreSQL can
  only return plain columns from an index, not `lower(name)`).
- `startup_published_mrr` (mrr) WHERE is_published: the smallest index covering the published
  set, so an exact COUNT(*) for `meta.total` (and MRR ranges) is an index-only scan.

SQLite needs nothing: its tables are small in development and the model's indexes serve it.
"""

from django.db import migrations

from startups.migrations._postgresql import postgresql_indexes

INDEXES = [
    (
        "startup_rank_order",
        "(mrr DESC NULLS LAST, lower(name), slug) INCLUDE (id, name) WHERE is_published",
    ),
    (
        "startup_mrr_asc_order",
        "(mrr ASC NULLS LAST, lower(name), slug) INCLUDE (id, name) WHERE is_published",
    ),
    (
        "startup_name_asc_order",
        "((mrr IS NULL), lower(name), slug) INCLUDE (id, name, mrr) WHERE is_published",
    ),
    (
        "startup_name_desc_order",
        "((mrr IS NULL), lower(name) DESC, slug DESC) INCLUDE (id, name, mrr) WHERE is_published",
    ),
    ("startup_published_mrr", "(mrr) WHERE is_published"),
    ("startup_name_trgm", "USING gin (UPPER(name::text) gin_trgm_ops)"),
    ("startup_category_trgm", "USING gin (UPPER(category::text) gin_trgm_ops)"),
    ("startup_description_trgm", "USING gin (UPPER(description::text) gin_trgm_ops)"),
]


class Migration(migrations.Migration):
    dependencies = [("startups", "0001_initial")]

    operations = [postgresql_indexes(INDEXES, extensions=("pg_trgm",))]
