"""A deterministic, realistic demo dataset (used by `seed_demo`)."""

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.utils.text import slugify

from openstartup import readcache
from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification

SEED = 20261122
DEMO_OWNER_PREFIX = "demo-founder-"
# The AI add-on is a curated, founder-approved set: every 12th of the first 1,200 startups (about
# 75 once unclaimed ones are skipped), however large the dataset, as in real life; /api/ai and
# MCP serve that set whole.
AI_ADDON_SPAN = 1200

PREFIXES = [
    "Acme",
    "Beacon",
    "Bright",
    "Cedar",
    "Cloud",
    "Crisp",
    "Delta",
    "Echo",
    "Ember",
    "Flux",
    "Forge",
    "Glow",
    "Harbor",
    "Hive",
    "Indigo",
    "Juniper",
    "Kite",
    "Lumen",
    "Maple",
    "Nimbus",
    "Nova",
    "Orbit",
    "Pixel",
    "Quill",
    "Rocket",
    "Sage",
    "Signal",
    "Sprout",
    "Summit",
    "Tidal",
    "Umbra",
    "Vector",
    "Willow",
    "Zenith",
    "Atlas",
    "Bolt",
    "Canvas",
    "Drift",
    "Fable",
    "Gist",
]
SUFFIXES = [
    "Analytics",
    "Base",
    "Bot",
    "CRM",
    "Desk",
    "Docs",
    "Flow",
    "Forms",
    "HQ",
    "Hub",
    "Kit",
    "Labs",
    "Mail",
    "Metrics",
    "Notes",
    "Pay",
    "Pulse",
    "Scout",
    "Ship",
    "Stack",
    "Sync",
    "Track",
    "Works",
    "AI",
    "Cast",
    "Deploy",
    "Feed",
    "Grid",
    "Loop",
    "Page",
]
CATEGORIES = [
    ("Developer Tools", "Software"),
    ("Artificial Intelligence", "Software"),
    ("Marketing", "Advertising & Marketing"),
    ("E-commerce", "Retail"),
    ("Fintech", "Financial Services"),
    ("Productivity", "Software"),
    ("Analytics", "Software"),
    ("Education", "Education"),
    ("Health & Fitness", "Healthcare"),
    ("Design Tools", "Software"),
    ("Security", "Information Security"),
    ("Content Creation", "Media"),
]
COUNTRIES = [
    "United States",
    "United Kingdom",
    "Germany",
    "France",
    "Canada",
    "India",
    "Netherlands",
    "Spain",
    "Brazil",
    "Australia",
    "Portugal",
    "Poland",
    None,
]
TECH = [
    "Python",
    "Django",
    "TypeScript",
    "React",
    "Next.js",
    "Go",
    "Rust",
    "PostgreSQL",
    "Redis",
    "Tailwind CSS",
    "Ruby on Rails",
    "Vue",
    "Svelte",
    "AWS",
    "Stripe",
    "OpenAI",
]
FIRST = [
    "Ada",
    "Ben",
    "Chloe",
    "Diego",
    "Elena",
    "Farah",
    "Gus",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lena",
    "Marc",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sam",
    "Tara",
]
LAST = [
    "Ahmed",
    "Berg",
    "Costa",
    "Dubois",
    "Evans",
    "Fischer",
    "Garcia",
    "Hughes",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Müller",
    "Novak",
    "Okafor",
    "Park",
    "Rossi",
    "Silva",
]
TEAM_SIZES = ["1", "2-5", "6-10", "11-25", None]
# Providers with subscription data, and one (one-off sales) without it.
SUBSCRIPTION_PROVIDERS = ["stripe", "lemonsqueezy", "polar"]
NO_SUBSCRIPTION_PROVIDER = "gumroad"


@dataclass
class DemoRows:
    """Plain column dicts (not model instances: building 100,000 of those is the slow part).

    Child rows name their startup by slug; ids are filled in after the parent rows exist.
    """

    startups: list[dict] = field(default_factory=list)
    founders: list[tuple[str, dict]] = field(default_factory=list)
    socials: list[tuple[str, dict]] = field(default_factory=list)
    verifications: list[tuple[str, dict]] = field(default_factory=list)
    monthly: list[tuple[str, dict]] = field(default_factory=list)


def _month_starts(end: date, count: int) -> list[date]:
    months = []
    year, month = end.year, end.month
    for _ in range(count):
        months.append(date(year, month, 1))
        year, month = (year - 1, 12) if month == 1 else (year, month - 1)
    return list(reversed(months))


def _unique_names(rng: random.Random, count: int) -> list[str]:
    combos = [f"{p}{s}" for p in PREFIXES for s in SUFFIXES]
    rng.shuffle(combos)
    names = []
    for index in range(count):
        base = combos[index % len(combos)]
        round_ = index // len(combos)
        names.append(base if round_ == 0 else f"{base} {round_ + 1}")
    return names


def _owners(count: int) -> list:
    """Demo owner accounts, created once and reused; every third one is verified."""
    user_model = get_user_model()
    wanted = [f"{DEMO_OWNER_PREFIX}{i}" for i in range(count)]
    existing = set(
        user_model.objects.filter(username__startswith=DEMO_OWNER_PREFIX).values_list(
            "username", flat=True
        )
    )
    user_model.objects.bulk_create(
        [
            user_model(
                username=name,
                email=f"{name}@example.com",
                password="!",  # unusable: demo owners cannot sign in  # noqa: S106
                is_verified=int(name.removeprefix(DEMO_OWNER_PREFIX)) % 3 == 0,
            )
            for name in wanted
            if name not in existing
        ],
        batch_size=1000,
    )
    by_name = dict(user_model.objects.filter(username__in=wanted).values_list("username", "id"))
    return [by_name[name] for name in wanted]


def build_demo(count: int, *, today: date | None = None) -> DemoRows:
    """Build (unsaved) rows for `count` startups; the same count gives the same data."""
    rng = random.Random(SEED)
    today = today or datetime.now(UTC).date()
    now = datetime(today.year, today.month, today.day, tzinfo=UTC)  # never in the future
    rows = DemoRows()
    owner_ids = _owners(max(1, min(count // 2, 500)))
    for index, name in enumerate(_unique_names(rng, count)):
        category, industry = CATEGORIES[rng.randrange(len(CATEGORIES))]
        roll = rng.random()
        # Kinds, in roughly realistic shares: verified 40%, self-reported 35%, unclaimed 25%.
        kind = "verified" if roll < 0.40 else "self" if roll < 0.75 else "unclaimed"
        if index < 4:  # the first rows cover every case even in a tiny dataset
            kind = ["verified", "verified", "self", "unclaimed"][index]
        provider = None
        if kind == "verified":
            no_sub = index == 1 or rng.random() < 0.05
            provider = NO_SUBSCRIPTION_PROVIDER if no_sub else rng.choice(SUBSCRIPTION_PROVIDERS)
        has_mrr = kind == "verified" or rng.random() > 0.15
        mrr = int(rng.lognormvariate(7.5, 1.6)) if has_mrr else None
        if provider == NO_SUBSCRIPTION_PROVIDER:
            mrr = None
        slug = slugify(name)
        on_sale = rng.random() < 0.12 or index == 2
        founders = [
            f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.choice([1, 1, 2, 3]))
        ]
        startup = dict(
            name=name,
            slug=slug,
            icon=f"https://{slug}.example.com/icon.png" if rng.random() < 0.8 else None,
            description=f"{name} helps teams with {category.lower()}."
            if rng.random() < 0.92
            else None,
            website=f"https://{slug}.example.com",
            category=category,
            categories=[category, *rng.sample([c for c, _ in CATEGORIES if c != category], 1)],
            industry=industry,
            business_type=rng.choice(["B2B", "B2B", "B2C", "B2B2C", None]),
            founded=rng.choice([None, *range(2012, 2026)]),
            country=rng.choice(COUNTRIES),
            team_size=rng.choice(TEAM_SIZES),
            technologies=rng.sample(TECH, rng.randint(0, 4)),
            founder_name=None if kind == "unclaimed" and rng.random() < 0.5 else founders[0],
            mrr=mrr,
            arr=None if mrr is None else mrr * 12,
            on_sale=on_sale,
            asking_price=None if not on_sale or mrr is None else mrr * rng.randint(24, 48),
            owner_id=None if kind == "unclaimed" else owner_ids[index % len(owner_ids)],
            ai_addon_active=kind != "unclaimed"
            and (index % 12 == 0 and index < AI_ADDON_SPAN or index < 2),
            ai_addon_expires_at=now + timedelta(days=30) if index % 24 == 0 else None,
            is_published=True,
            currency="USD",
            created_at=now,
            updated_at=now,
        )
        rows.startups.append(startup)
        for position, founder in enumerate(founders if kind != "unclaimed" else founders[:1]):
            handle = slugify(founder).replace("-", "")
            rows.founders.append(
                (
                    slug,
                    dict(
                        name=founder,
                        title=["Founder", "Co-founder & CEO", "CTO", None][position % 4],
                        twitter=f"https://x.com/{handle}" if rng.random() < 0.6 else None,
                        linkedin=f"https://www.linkedin.com/in/{handle}"
                        if rng.random() < 0.5
                        else None,
                        position=position,
                    ),
                )
            )
        rows.socials.append((slug, dict(platform="x", url=f"https://x.com/{slug}")))
        if rng.random() < 0.5:
            rows.socials.append(
                (slug, dict(platform="linkedin", url=f"https://www.linkedin.com/company/{slug}"))
            )
        if kind == "verified":
            _add_verification(rows, rng, slug, provider, mrr, today, now)
    return rows


def _add_verification(
    rows: DemoRows,
    rng: random.Random,
    slug: str,
    provider: str,
    mrr: int | None,
    today: date,
    now: datetime,
) -> None:
    months = _month_starts(today, rng.randint(12, 36))
    # A growth curve ending near the current MRR (or a sales level for one-off providers).
    level = mrr if mrr is not None else int(rng.lognormvariate(7.0, 1.2))
    start = max(1, int(level * rng.uniform(0.15, 0.7)))
    verification = dict(
        provider=provider,
        level="verified",
        currency="USD",
        verified_at=now - timedelta(hours=rng.randint(0, 20), milliseconds=rng.randint(0, 999)),
        mrr=mrr,
        arr=None if mrr is None else mrr * 12,
        total_revenue=0,
        last_30_days=0,
        customers=max(1, level // rng.randint(9, 49)),
    )
    total = last_net = 0
    for step, month in enumerate(months):
        gross = int(start + (level - start) * step / max(1, len(months) - 1))
        gross = max(0, int(gross * rng.uniform(0.93, 1.07)))
        refunds = int(gross * rng.choice([0, 0, 0.01, 0.02, 0.05]))
        last_net = gross - refunds
        total += last_net
        rows.monthly.append((slug, dict(month=month, gross=gross, refunds=refunds)))
    verification["total_revenue"] = total
    verification["last_30_days"] = last_net
    rows.verifications.append((slug, verification))


def _chunks(items: list, size: int = 5000):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _insert(model: type[models.Model], rows: list[dict], batch: int = 2000) -> None:
    """INSERT many rows through one prepared statement (far faster than bulk_create here)."""
    if not rows:
        return
    conn = connections[DEFAULT_DB_ALIAS]
    columns = list(rows[0])
    fields = [model._meta.get_field(column) for column in columns]
    # Only dates and JSON need the backend's conversion; plain values go through as they are.
    converted = [
        (column, field)
        for column, field in zip(columns, fields, strict=True)
        if isinstance(field, models.DateField | models.JSONField)
    ]
    quote = conn.ops.quote_name
    sql = "INSERT INTO {} ({}) VALUES ({})".format(  # noqa: S608 - names from model metadata
        quote(model._meta.db_table),
        ", ".join(quote(field.column) for field in fields),
        ", ".join(["%s"] * len(fields)),
    )

    def prepared(chunk: list[dict]):
        for row in chunk:
            row = dict(row)
            for column, model_field in converted:
                row[column] = model_field.get_db_prep_save(row[column], conn)
            yield [row[column] for column in columns]

    with conn.cursor() as cursor:
        if conn.vendor == "postgresql":
            # COPY is PostgreSQL's bulk path: one stream instead of a statement per row.
            copy_sql = "COPY {} ({}) FROM STDIN".format(
                quote(model._meta.db_table), ", ".join(quote(field.column) for field in fields)
            )
            with cursor.cursor.copy(copy_sql) as copy:
                for values in prepared(rows):
                    copy.write_row(values)
            return
        for start in range(0, len(rows), batch):
            cursor.executemany(sql, list(prepared(rows[start : start + batch])))


def _with_parent(rows: list[tuple[str, dict]], ids: dict[str, int], column: str) -> list[dict]:
    return [{**row, column: ids[key]} for key, row in rows]


def _cascade_sql(model: type[models.Model], ids_sql: str, quote) -> list[str]:
    """Statements deleting the rows of `model` whose ids `ids_sql` selects, children first,
    following the models' own on_delete rules (CASCADE deletes, SET_NULL clears)."""
    statements = []
    table = quote(model._meta.db_table)
    for relation in model._meta.related_objects:
        if relation.many_to_many or not relation.field.concrete:
            continue
        child = relation.related_model
        child_table, column = quote(child._meta.db_table), quote(relation.field.column)
        if relation.on_delete is models.CASCADE:
            child_ids = f"SELECT id FROM {child_table} WHERE {column} IN ({ids_sql})"  # noqa: S608
            statements += _cascade_sql(child, child_ids, quote)
            statements.append(f"DELETE FROM {child_table} WHERE {column} IN ({ids_sql})")  # noqa: S608
        elif relation.on_delete is models.SET_NULL:
            statements.append(
                f"UPDATE {child_table} SET {column} = NULL WHERE {column} IN ({ids_sql})"  # noqa: S608
            )
    return statements + [f"DELETE FROM {table} WHERE id IN ({ids_sql})"]  # noqa: S608


def _delete_startups(slugs: list[str]) -> None:
    """Delete the startups with these slugs and everything that hangs off them."""
    conn = connections[DEFAULT_DB_ALIAS]
    if conn.vendor != "postgresql":
        for chunk in _chunks(slugs):
            MonthlyRevenue.objects.filter(verification__startup__slug__in=chunk).delete()
            Verification.objects.filter(startup__slug__in=chunk).delete()
            Founder.objects.filter(startup__slug__in=chunk).delete()
            Social.objects.filter(startup__slug__in=chunk).delete()
            Startup.objects.filter(slug__in=chunk).delete()
        return
    # PostgreSQL: a handful of set-based statements over a temporary id list, instead of the
    # ORM's collector loading every row (the slow part of a re-seed at 100,000).
    quote = conn.ops.quote_name
    with conn.cursor() as cursor:
        table = quote(Startup._meta.db_table)
        doomed = f"SELECT id FROM {table} WHERE slug = ANY(%s)"  # noqa: S608 - model metadata
        cursor.execute(f"CREATE TEMPORARY TABLE seed_doomed ON COMMIT DROP AS {doomed}", [slugs])
        cursor.execute("ANALYZE seed_doomed")
        for statement in _cascade_sql(Startup, "SELECT id FROM seed_doomed", quote):
            cursor.execute(statement)
        cursor.execute("DROP TABLE seed_doomed")


def _ids_by_slug(slugs: list[str]) -> dict[str, int]:
    conn = connections[DEFAULT_DB_ALIAS]
    if conn.vendor == "postgresql":  # one query with an array instead of IN-list chunks
        with conn.cursor() as cursor:
            cursor.execute(
                f"SELECT slug, id FROM {conn.ops.quote_name(Startup._meta.db_table)} "  # noqa: S608
                "WHERE slug = ANY(%s)",
                [slugs],
            )
            return dict(cursor.fetchall())
    ids = {}
    for chunk in _chunks(slugs):
        ids.update(Startup.objects.filter(slug__in=chunk).values_list("slug", "id"))
    return ids


DEMO_MODELS = (Startup, Founder, Social, Verification, MonthlyRevenue)


@contextmanager
def _bulk_load(models_: tuple[type[models.Model], ...]) -> Iterator[None]:
    """On PostgreSQL, the classic bulk-load recipe inside the seed's transaction: drop the
    secondary indexes and foreign keys of these tables, load, then rebuild them. One index
    build and one validating join per key are far cheaper than maintaining a dozen indexes
    (three of them trigram GIN) row by row and checking a million deferred foreign keys at
    commit. Definitions are read back from the catalog, so nothing here repeats the schema; a
    failure rolls the whole transaction back, DDL included. Readers wait for the seed (the
    tables are locked until it commits)."""
    conn = connections[DEFAULT_DB_ALIAS]
    if conn.vendor != "postgresql":
        yield
        return
    tables = [model._meta.db_table for model in models_]
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) "
            "FROM pg_constraint c WHERE c.contype = 'f' AND "
            "(c.conrelid::regclass::text = ANY(%s) OR c.confrelid::regclass::text = ANY(%s))",
            [tables, tables],
        )
        foreign_keys = cursor.fetchall()
        cursor.execute(
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid::regclass::text = ANY(%s) AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
            [tables],
        )
        indexes = cursor.fetchall()
        quote = conn.ops.quote_name
        # Run foreign-key checks still queued from earlier writes in this transaction now: an
        # ALTER TABLE is refused while a table has pending trigger events.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table, name, _ in foreign_keys:
            cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {quote(name)}")
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {quote(name)}")
        yield
        for _, definition in indexes:
            cursor.execute(definition)
        for table, name, definition in foreign_keys:
            cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {quote(name)} {definition}")


@transaction.atomic
def seed_demo(count: int, progress: Callable[[str], None] | None = None) -> int:
    """Replace the demo startups with a fresh deterministic set of `count`; returns the count.

    `progress`, when given, is told what each step is doing (large counts take a while)."""
    say = progress or (lambda message: None)
    say(f"building {count} demo startups")
    rows = build_demo(count)
    with _bulk_load(DEMO_MODELS):
        loaded = _load(rows, say)
    readcache.bump("data")  # bulk inserts send no model signals
    return loaded


def _load(rows: DemoRows, say: Callable[[str], None]) -> int:
    slugs = [startup["slug"] for startup in rows.startups]
    say("removing the previous demo startups")
    _delete_startups(slugs)
    say(f"inserting {len(rows.startups)} startups")
    _insert(Startup, rows.startups)
    startup_ids = _ids_by_slug(slugs)
    say(f"inserting {len(rows.founders)} founders and {len(rows.socials)} links")
    _insert(Founder, _with_parent(rows.founders, startup_ids, "startup_id"))
    _insert(Social, _with_parent(rows.socials, startup_ids, "startup_id"))
    say(f"inserting {len(rows.verifications)} verifications and {len(rows.monthly)} months")
    _insert(Verification, _with_parent(rows.verifications, startup_ids, "startup_id"))
    verification_ids = dict(
        Verification.objects.filter(
            startup_id__in=[startup_ids[slug] for slug, _ in rows.verifications]
        ).values_list("startup__slug", "id")
    )
    _insert(MonthlyRevenue, _with_parent(rows.monthly, verification_ids, "verification_id"))
    return len(rows.startups)


def refresh_planner_statistics() -> None:
    """After a bulk load: fresh statistics, and on PostgreSQL a visibility map for index-only
    scans (without it an exact COUNT(*) for meta.total reads the whole table)."""
    tables = [m._meta.db_table for m in DEMO_MODELS]
    conn = connections[DEFAULT_DB_ALIAS]
    with conn.cursor() as cursor:
        for table in tables:
            if conn.vendor == "postgresql" and not conn.in_atomic_block:
                cursor.execute(f"VACUUM (ANALYZE) {conn.ops.quote_name(table)}")
            else:
                cursor.execute(f"ANALYZE {conn.ops.quote_name(table)}")
