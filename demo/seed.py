"""A deterministic, realistic demo dataset (used by `seed_demo`).

The rows are built here and written by demo/bulk.py (the loader `make bench` uses too); nothing
touches the schema. Verified demo startups are connected to the `demo` provider
(verification/providers/demo.py) with the figures a sync of it computes, so no figure is ever
shown as verified under a real provider's name; their earlier days get snapshots computed by the
same provider.
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone
from django.utils.text import slugify

from core.formats import month_start
from demo import bulk
from startups.models import (
    Founder,
    MonthlyRevenue,
    RevenueSnapshot,
    Social,
    Startup,
    Verification,
)
from verification.models import ProviderConnection
from verification.providers import demo as demo_provider

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


@dataclass
class DemoRows:
    """Plain column dicts (not model instances: building 100,000 of those is the slow part).

    Child rows name their startup by slug; ids are filled in after the parent rows exist.
    `connections` holds, per verified startup, the demo provider's recipe.
    """

    startups: list[dict] = field(default_factory=list)
    founders: list[tuple[str, dict]] = field(default_factory=list)
    socials: list[tuple[str, dict]] = field(default_factory=list)
    connections: list[tuple[str, demo_provider.Recipe]] = field(default_factory=list)


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
        sales_only = kind == "verified" and (index == 1 or rng.random() < 0.05)
        has_mrr = kind == "verified" or rng.random() > 0.15
        mrr = int(rng.lognormvariate(7.5, 1.6)) if has_mrr else None
        if sales_only:
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
        # The profile lists the founder the list names, and no other (unclaimed startups).
        if kind == "unclaimed":
            founders = founders[:1] if startup["founder_name"] else []
        for position, founder in enumerate(founders):
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
            rows.connections.append((slug, _recipe(rng, index, mrr, sales_only, today)))
    return rows


def _recipe(
    rng: random.Random, index: int, mrr: int | None, sales_only: bool, today: date
) -> demo_provider.Recipe:
    """The demo provider's growth curve: 12 to 36 months of history, reaching `mrr` (or a
    sales level) a few weeks before today, so the last 30 days show some growth or none."""
    months = rng.randint(12, 36)
    level = mrr if mrr is not None else max(1, int(rng.lognormvariate(7.0, 1.2)))
    return demo_provider.Recipe(
        seed=SEED + index,
        level=max(1, level),
        start=month_start(today - timedelta(days=int(months * 30.4375) - 15)),
        plateau=today - timedelta(days=rng.randint(-20, 60)),
        kind=demo_provider.SALES if sales_only else demo_provider.SUBSCRIPTIONS,
    )


def seed_demo(
    count: int,
    *,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Replace the demo startups with a fresh deterministic set of `count`; returns the count.

    Startups, people and links are written with every verified one's figures as the demo
    provider computes them for a sync (demo/bulk.py), all in one transaction. `progress`,
    when given, is told what each step is doing (large counts take a while)."""
    say = progress or (lambda message: None)
    now = now or timezone.now()
    say(f"building {count} demo startups")
    rows = build_demo(count, today=now.astimezone(UTC).date())
    return bulk.load(rows, count=count, now=now, say=say)


# The tables a load writes (their planner statistics are refreshed after it).
LOADED_MODELS = (
    Startup,
    Founder,
    Social,
    Verification,
    MonthlyRevenue,
    RevenueSnapshot,
    ProviderConnection,
)


def refresh_planner_statistics() -> None:
    """After a bulk load: fresh statistics, and on PostgreSQL a visibility map for index-only
    scans (without it an exact COUNT(*) for meta.total reads the whole table)."""
    tables = [m._meta.db_table for m in LOADED_MODELS]
    conn = connections[DEFAULT_DB_ALIAS]
    with conn.cursor() as cursor:
        for table in tables:
            if conn.vendor == "postgresql" and not conn.in_atomic_block:
                cursor.execute(f"VACUUM (ANALYZE) {conn.ops.quote_name(table)}")
            else:
                cursor.execute(f"ANALYZE {conn.ops.quote_name(table)}")
