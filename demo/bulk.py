"""The demo dataset written in bulk: `seed_demo` and `make bench` load it through here.

The rows are `build_demo`'s; every verified startup's figures are the demo provider's own
arithmetic (`demo_provider.compute` + `figures_in_usd`, what `revenue_sync` runs on the stored
key) and its earlier days are the provider's daily history, so the figures are exactly what one
sync per startup writes (tests/test_data_commands.py re-syncs a loaded set and finds nothing to
change); only the write path differs: COPY on PostgreSQL (executemany elsewhere), one
transaction, instead of one sync transaction per startup (100,000 startups took 13 minutes).
"""

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from multiprocessing import get_all_start_methods, get_context
from operator import itemgetter

from django.db import connection, models, transaction

from startups.changes import loaded_changes, slugs_present, startups_change_record
from startups.freshness import METHODOLOGY_VERSION
from startups.history import GROWTH_DAYS, growth_ratio
from startups.models import Founder, MonthlyRevenue, RevenueSnapshot, Social, Startup, Verification
from verification import crypto
from verification.models import ProviderConnection
from verification.providers import demo as demo_provider
from verification.services import figures_in_usd

# Days of daily snapshots before the seed's own sync: enough for `growth30d` to show.
HISTORY_DAYS = 45
# Each earlier day's sync is taken as at 23:00 UTC, the last of that day.
EARLIER_SYNC_TIME = time(23)


def earlier_snapshot_rows(recipe: demo_provider.Recipe, *, today: date) -> list[dict]:
    """What daily syncs would have recorded over the HISTORY_DAYS before `today` (the seed's own
    sync records today), from the demo provider's own curve: a RevenueSnapshot's fields but its
    startup, one dict a day, oldest first."""
    days = [today - timedelta(days=n) for n in range(HISTORY_DAYS, 0, -1)]
    days = [day for day in days if day >= recipe.start]
    if not days:
        return []
    return [
        {
            "provider": demo_provider.NAME,
            "synced_at": datetime.combine(row["date"], EARLIER_SYNC_TIME, UTC),
            **row,
        }
        for row in demo_provider.daily_history(recipe, days)
    ]


def _copy(model: type[models.Model], rows: list[dict]) -> None:
    """Insert plain column dicts: COPY on PostgreSQL, executemany elsewhere."""
    if not rows:
        return
    columns = list(rows[0])
    fields = [model._meta.get_field(column) for column in columns]

    # Only the columns whose Python value is not already what the driver sends go through
    # the field (JSON, encrypted text); the rest as they are: 18,000,000 snapshot rows at
    # 1,000,000 startups made the per-value call most of the load's time.
    # A DateTimeField is a DateField: COPY takes an aware datetime as it is, but SQLite's
    # driver would write its own text ("+00:00" appended), which Django's comparisons (the
    # updated-desc cursor's `updated_at = %s`) never match.
    prepared = [
        not isinstance(
            field,
            models.IntegerField
            | models.CharField
            | models.DateField
            | models.FloatField
            | models.BooleanField
            | models.ForeignKey,
        )
        or (isinstance(field, models.DateTimeField) and connection.vendor != "postgresql")
        for field in fields
    ]
    if not any(prepared):
        values = map(itemgetter(*columns), rows)
    else:
        values = (
            [
                field.get_db_prep_save(row[c], connection) if prep else row[c]
                for c, field, prep in zip(columns, fields, prepared, strict=True)
            ]
            for row in rows
        )
    _copy_into(model._meta.db_table, [field.column for field in fields], values)


def _copy_into(table: str, columns: list[str], values: Iterable) -> None:
    """Insert rows of plain values into `table`: COPY on PostgreSQL, executemany elsewhere."""
    quote = connection.ops.quote_name
    names = ", ".join(quote(column) for column in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {quote(table)} ({names}) FROM STDIN") as copy:
                for row in values:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(columns))
        cursor.executemany(
            f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})",  # noqa: S608 - metadata
            list(values),
        )


def _cascade_sql(model: type[models.Model], ids_sql: str) -> list[str]:
    """Statements deleting the rows of `model` whose ids `ids_sql` selects, children first,
    following the models' own on_delete rules (CASCADE deletes, SET_NULL clears)."""
    quote, statements = connection.ops.quote_name, []
    for relation in model._meta.related_objects:
        if relation.many_to_many or not relation.field.concrete:
            continue
        child = relation.related_model
        child_table, column = quote(child._meta.db_table), quote(relation.field.column)
        if relation.on_delete is models.CASCADE:
            child_ids = f"SELECT id FROM {child_table} WHERE {column} IN ({ids_sql})"  # noqa: S608
            statements += _cascade_sql(child, child_ids)
            statements.append(f"DELETE FROM {child_table} WHERE {column} IN ({ids_sql})")  # noqa: S608
        elif relation.on_delete is models.SET_NULL:
            statements.append(
                f"UPDATE {child_table} SET {column} = NULL WHERE {column} IN ({ids_sql})"  # noqa: S608
            )
    table = quote(model._meta.db_table)
    return [*statements, f"DELETE FROM {table} WHERE id IN ({ids_sql})"]  # noqa: S608


def _delete(slugs: list[str]) -> None:
    """Delete these startups and everything hanging off them, set-based (PostgreSQL)."""
    if connection.vendor != "postgresql":
        Startup.objects.filter(slug__in=slugs).delete()
        return
    table = connection.ops.quote_name(Startup._meta.db_table)
    with connection.cursor() as cursor:
        doomed = f"SELECT id FROM {table} WHERE slug = ANY(%s)"  # noqa: S608 - model metadata
        cursor.execute(f"CREATE TEMPORARY TABLE demo_doomed ON COMMIT DROP AS {doomed}", [slugs])
        cursor.execute("ANALYZE demo_doomed")
        for statement in _cascade_sql(Startup, "SELECT id FROM demo_doomed"):
            cursor.execute(statement)
        cursor.execute("DROP TABLE demo_doomed")


def _with(rows: list[tuple[str, dict]], ids: dict[str, int]) -> list[dict]:
    return [{**row, "startup_id": ids[slug]} for slug, row in rows if slug in ids]


# Above this many startups, verified ones take the revenue recipes of the first this-many's
# verified startups in turn (under their own names): the demo provider's arithmetic costs a few
# milliseconds per recipe, which at 1,000,000 startups (400,000 verified) took half an hour. The
# figures stay exactly what a sync of each stored key computes.
UNIQUE_RECIPES_UP_TO = 100_000
CHUNK = 50_000


@dataclass(frozen=True)
class _Computed:
    figures: object
    earlier: list[dict]
    growth: float | None


def _compute(recipe: demo_provider.Recipe, *, now: datetime, today: date) -> _Computed:
    figures = figures_in_usd(demo_provider.compute(raw={"recipe": recipe}, now=now))
    earlier = earlier_snapshot_rows(recipe, today=today)
    # Daily earlier snapshots: the one 30 days back is that day's.
    base = next((r for r in earlier if (today - r["date"]).days == GROWTH_DAYS), None)
    growth = growth_ratio(current=figures.mrr, earlier=base and base["mrr"])
    return _Computed(figures=figures, earlier=earlier, growth=growth)


# From this many distinct recipes on, their figures are computed by PROCESSES processes (forked:
# they inherit everything, touch no database and hand back plain values); 40,000 recipes, the
# most a load computes, took two minutes of one CPU.
POOL_FROM = 2_000
PROCESSES = min(2, os.cpu_count() or 1)


def _compute_all(
    recipes: list[demo_provider.Recipe], *, now: datetime, today: date
) -> dict[demo_provider.Recipe, _Computed]:
    """Each recipe's figures, in a pool of PROCESSES processes for many recipes."""
    work = partial(_compute, now=now, today=today)
    if len(recipes) < POOL_FROM or PROCESSES < 2 or "fork" not in get_all_start_methods():
        return dict(zip(recipes, map(work, recipes), strict=True))
    chunk = max(1, len(recipes) // (PROCESSES * 8))
    with ProcessPoolExecutor(PROCESSES, mp_context=get_context("fork")) as pool:
        return dict(zip(recipes, pool.map(work, recipes, chunksize=chunk), strict=True))


def _recipes(rows, count: int) -> list[tuple[str, demo_provider.Recipe]]:
    """Each verified startup's recipe; past UNIQUE_RECIPES_UP_TO startups, reused in turn."""
    index_of = {row["slug"]: i for i, row in enumerate(rows.startups)}
    own = [(slug, r) for slug, r in rows.connections if index_of[slug] < UNIQUE_RECIPES_UP_TO]
    if count <= UNIQUE_RECIPES_UP_TO or not own:
        return rows.connections
    return [
        (slug, recipe if index_of[slug] < UNIQUE_RECIPES_UP_TO else own[n % len(own)][1])
        for n, (slug, recipe) in enumerate(rows.connections)
    ]


def load(rows, *, count: int, now: datetime, say: Callable[[str], None]) -> int:
    """Replace the startups of `rows` (`demo.seed.DemoRows`) and load them, in one transaction
    (readers see the old set or the new one)."""
    today = now.astimezone(UTC).date()
    say(f"computing {len(rows.connections)} demo connections' figures")
    recipes = dict(_recipes(rows, count))
    computed = _compute_all(list(dict.fromkeys(recipes.values())), now=now, today=today)
    # The headline columns go in with the startup rows (no UPDATE pass afterwards).
    for row in rows.startups:
        row["growth_30d"] = None
        if (recipe := recipes.get(row["slug"])) is not None:
            done = computed[recipe]
            row.update(mrr=done.figures.mrr, arr=done.figures.arr, growth_30d=done.growth)
    founders, socials = _by_slug(rows.founders), _by_slug(rows.socials)
    say(f"inserting {len(rows.startups)} startups, their founders and links")
    with transaction.atomic():
        _skip_foreign_key_checks()
        aside = _set_indexes_aside() if len(rows.startups) >= REBUILD_INDEXES_FROM else []
        replaced = slugs_present([row["slug"] for row in rows.startups])
        _delete([row["slug"] for row in rows.startups])
        verified: list[tuple] = []
        for start in range(0, len(rows.startups), CHUNK):
            chunk = rows.startups[start : start + CHUNK]
            slugs = [row["slug"] for row in chunk]
            _copy(Startup, chunk)
            ids = dict(Startup.objects.filter(slug__in=slugs).values_list("slug", "id"))
            _copy(Founder, _with([(s, r) for s in slugs for r in founders.get(s, ())], ids))
            _copy(Social, _with([(s, r) for s in slugs for r in socials.get(s, ())], ids))
            verified += [(ids[s], recipes[s]) for s in slugs if s in recipes]
        say(f"writing {len(verified)} demo connections' figures")
        _load_verified(verified, computed=computed, now=now, today=today)
        if aside:
            say(f"building {len(aside)} indexes again")
            _build_indexes(aside)
        startups_change_record(loaded_changes(rows.startups, replaced=replaced), now=now)
    return len(rows.startups)


# From this many startups on (PostgreSQL), the indexes no constraint owns on the tables the load
# fills are dropped for the load and built again after it, in its transaction: one build over
# the rows is far cheaper than growing them row by row (three trigram GIN indexes on the
# startups). Readers then wait for the load's commit instead of reading the old set meanwhile.
REBUILD_INDEXES_FROM = 200_000
_REFILLED = (Startup, Founder, Social, RevenueSnapshot, MonthlyRevenue)


def _set_indexes_aside() -> list[str]:
    """Drop the indexes of the refilled tables that no constraint owns (PostgreSQL); their
    definitions, to build them again."""
    if connection.vendor != "postgresql":
        return []
    tables = [model._meta.db_table for model in _REFILLED]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i "
            "WHERE i.schemaname = current_schema() AND i.tablename = ANY(%s) "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)",
            [tables],
        )
        found = cursor.fetchall()
        for name, _ in found:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
    return [definition for _, definition in found]


def _build_indexes(definitions: list[str]) -> None:
    with connection.cursor() as cursor:
        # Deferred foreign-key checks still queued (PostgreSQL refuses CREATE INDEX on a table
        # with pending trigger events) run now instead of at the commit.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # GIN (the trigram indexes) builds in memory up to this much; B-trees sort in
        # parallel workers (PostgreSQL 11+).
        cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
        cursor.execute("SET LOCAL max_parallel_maintenance_workers = 2")
        for definition in definitions:
            cursor.execute(definition)


def _skip_foreign_key_checks() -> None:
    """On PostgreSQL, as a superuser (the bench's own server): no foreign-key trigger for the
    rows of this transaction (they are consistent by construction); at 1,000,000 startups the
    deferred checks queued ~25,000,000 trigger events for the commit. Elsewhere: nothing."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if cursor.fetchone()[0]:
            cursor.execute("SET LOCAL session_replication_role = replica")


def _by_slug(rows: list[tuple[str, dict]]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for slug, row in rows:
        found.setdefault(slug, []).append(row)
    return found


def _load_verified(verified: list, *, computed: dict, now: datetime, today: date) -> None:
    """The demo connection, verification, monthly figures and daily snapshots of each
    (startup id, recipe): what `revenue_sync` and the earlier days' syncs write. Startups that
    share a recipe share its rows: the monthly rows and daily snapshots (some 28,000,000 at
    1,000,000 startups) are written once per recipe and fanned out by the database."""
    numbers: dict[demo_provider.Recipe, int] = {}
    keys: dict[demo_provider.Recipe, str] = {}
    connections, verifications, owners = [], [], []
    for startup_id, recipe in verified:
        figures = computed[recipe].figures
        if recipe not in numbers:
            numbers[recipe] = len(numbers)
            keys[recipe] = crypto.encrypt_key(recipe.key())
        owners.append((startup_id, numbers[recipe]))
        connections.append(
            dict(
                startup_id=startup_id,
                provider=demo_provider.NAME,
                encrypted_key=keys[recipe],
                status=ProviderConnection.Status.OK,
                last_synced_at=now,
                last_attempt_at=now,
                fx_rates=figures.fx_rates,
                created_at=now,
                updated_at=now,
            )
        )
        verifications.append(
            dict(
                startup_id=startup_id,
                provider=demo_provider.NAME,
                level="verified",
                verified_at=now,
                currency="USD",
                methodology_version=METHODOLOGY_VERSION,
                **_counts(figures),
            )
        )
    _copy(ProviderConnection, connections)
    _copy(Verification, verifications)
    days, months = [], []
    for recipe, number in numbers.items():
        done = computed[recipe]
        today_row = dict(
            date=today, provider=demo_provider.NAME, synced_at=now, **_counts(done.figures)
        )
        days += [(number, *(row[c] for c in DAY_COLUMNS)) for row in [*done.earlier, today_row]]
        months += [(number, row.month, row.gross, row.refunds) for row in done.figures.monthly]
    _fan_out(owners, days, months)


DAY_COLUMNS = (
    "date",
    "provider",
    "synced_at",
    "mrr",
    "arr",
    "total_revenue",
    "last_30_days",
    "customers",
)


def _counts(figures) -> dict:
    return dict(
        mrr=figures.mrr,
        arr=figures.arr,
        total_revenue=figures.total_revenue,
        last_30_days=figures.last_30_days,
        customers=figures.customers,
    )


def _fan_out(owners: list[tuple], days: list[tuple], months: list[tuple]) -> None:
    """Each startup's snapshots and its verification's monthly rows from its recipe's rows
    (temporary tables typed like the real ones), by two INSERT ... SELECT."""
    quote = connection.ops.quote_name
    snapshot, verification = RevenueSnapshot._meta.db_table, Verification._meta.db_table
    monthly = MonthlyRevenue._meta.db_table
    day_columns = ", ".join(quote(c) for c in DAY_COLUMNS)
    with connection.cursor() as cursor:
        for statement in (
            f"CREATE TEMPORARY TABLE demo_owner AS SELECT startup_id, startup_id AS recipe "  # noqa: S608
            f"FROM {quote(snapshot)} WHERE 1 = 0",
            f"CREATE TEMPORARY TABLE demo_day AS SELECT startup_id AS recipe, {day_columns} "  # noqa: S608
            f"FROM {quote(snapshot)} WHERE 1 = 0",
            f"CREATE TEMPORARY TABLE demo_month AS SELECT verification_id AS recipe, month, "  # noqa: S608
            f"gross, refunds FROM {quote(monthly)} WHERE 1 = 0",
        ):
            cursor.execute(statement)
    _copy_into("demo_owner", ["startup_id", "recipe"], owners)
    _copy_into("demo_day", ["recipe", *DAY_COLUMNS], days)
    _copy_into("demo_month", ["recipe", "month", "gross", "refunds"], months)
    picked = ", ".join(f"d.{quote(c)}" for c in DAY_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(snapshot)} (startup_id, {day_columns}) "  # noqa: S608
            f"SELECT o.startup_id, {picked} FROM demo_owner o "
            "JOIN demo_day d ON d.recipe = o.recipe"
        )
        cursor.execute(
            f"INSERT INTO {quote(monthly)} (verification_id, month, gross, refunds) "  # noqa: S608
            f"SELECT v.id, m.month, m.gross, m.refunds FROM demo_owner o "
            f"JOIN {quote(verification)} v ON v.startup_id = o.startup_id "
            "JOIN demo_month m ON m.recipe = o.recipe"
        )
        for table in ("demo_owner", "demo_day", "demo_month"):
            cursor.execute(f"DROP TABLE {table}")
