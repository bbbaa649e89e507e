"""A startup's profile as plain rows: what the detail document is shaped from
(`startups.serializers.profile_data`), read in one statement or taken from a loaded startup.

`startup_profile` is the detail miss's read: the startup with its verification and provider
connection joined, and its founders, socials and monthly rows as JSON arrays from correlated
subqueries, in one statement (prepared on PostgreSQL: planned once per connection). Through
the ORM (`selectors.startup_get`) the same profile took four statements (the joins, then three
prefetches), each built and compiled again per request, and a model instance per row: most of
the CPU a detail miss cost. `profile_of` makes the same rows from a startup `startup_get`
loaded, so every surface shapes the profile from one form (tests/restapi/test_detail_profile.py
compares the two).
"""

import json
from datetime import date, datetime
from functools import cache
from typing import Any, TypedDict

from django.db import connections, router

from core import plainsql
from core.postgresql import prepared_cursor
from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification
from startups.selectors import storable_slug


class FounderRow(TypedDict):
    name: str
    title: str | None
    twitter: str | None
    linkedin: str | None


class SocialRow(TypedDict):
    platform: str
    url: str


class MonthRow(TypedDict):
    month: date
    gross: int
    refunds: int
    net: int


class VerificationRow(TypedDict):
    provider: str
    level: str
    verified_at: datetime
    currency: str
    methodology_version: str
    mrr: int | None
    arr: int | None
    total_revenue: int
    last_30_days: int
    customers: int
    credential: str | None
    provider_reported: Any
    monthly: list[MonthRow]  # by month


class ConnectionRow(TypedDict):
    status: str
    account_name: str | None
    account_domain: str | None


class Profile(TypedDict):
    id: int
    name: str
    slug: str
    icon: str | None
    description: str | None
    website: str | None
    category: str | None
    business_type: str | None
    founded: int | None
    country: str | None
    team_size: str | None
    technologies: Any
    founder_name: str | None
    mrr: int | None
    arr: int | None
    currency: str
    growth_30d: float | None
    on_sale: bool
    asking_price: int | None
    founders: list[FounderRow]  # by position, then id
    socials: list[SocialRow]  # by platform, then id
    verification: VerificationRow | None  # None: self-reported
    connection: ConnectionRow | None  # the provider connection, when there is one


STARTUP_COLUMNS = (
    "id",
    "name",
    "slug",
    "icon",
    "description",
    "website",
    "category",
    "business_type",
    "founded",
    "country",
    "team_size",
    "technologies",
    "founder_name",
    "mrr",
    "arr",
    "currency",
    "growth_30d",
    "on_sale",
    "asking_price",
)
VERIFICATION_COLUMNS = (
    "provider",
    "level",
    "verified_at",
    "currency",
    "methodology_version",
    "mrr",
    "arr",
    "total_revenue",
    "last_30_days",
    "customers",
    "credential",
    "provider_reported",
)
CONNECTION_COLUMNS = ("status", "account_name", "account_domain")
FOUNDER_COLUMNS = ("name", "title", "twitter", "linkedin")
SOCIAL_COLUMNS = ("platform", "url")
MONTH_COLUMNS = ("month", "gross", "refunds", "net")


# --- from a loaded startup ----------------------------------------------------------------------


def founder_rows(startup: Startup) -> list[FounderRow]:
    """The founder rows of a startup whose founders are loaded (in their order)."""
    return [_row(founder, FOUNDER_COLUMNS) for founder in startup.founders.all()]


def verification_row(verification: Verification) -> VerificationRow:
    """A verification with its monthly rows loaded, as plain values."""
    row = _row(verification, VERIFICATION_COLUMNS)
    row["monthly"] = [_row(month, MONTH_COLUMNS) for month in verification.monthly.all()]
    return row


def connection_row(startup: Startup) -> ConnectionRow | None:
    connection = getattr(startup, "provider_connection", None)
    return None if connection is None else _row(connection, CONNECTION_COLUMNS)


def profile_of(startup: Startup) -> Profile:
    """The profile of a startup as `selectors.startup_get` loads it."""
    profile = _row(startup, STARTUP_COLUMNS)
    verification = getattr(startup, "verification", None)
    profile["founders"] = founder_rows(startup)
    profile["socials"] = [_row(social, SOCIAL_COLUMNS) for social in startup.socials.all()]
    profile["verification"] = None if verification is None else verification_row(verification)
    profile["connection"] = connection_row(startup)
    return profile


def _row(instance: Any, columns: tuple[str, ...]) -> dict:
    return {column: getattr(instance, column) for column in columns}


# --- in one statement ---------------------------------------------------------------------------


def startup_profile(*, slug: str, db: str | None = None) -> Profile | None:
    """The published startup named `slug` with everything its detail shows, as plain rows, in
    one statement; or None."""
    if not storable_slug(slug):
        return None
    connection = connections[db or router.db_for_read(Startup)]
    with prepared_cursor(connection) as cursor:
        cursor.execute(_statement(connection.vendor), [slug])
        found = cursor.fetchone()
    return None if found is None else _profile(found, connection)


def _profile(found: tuple, connection: Any) -> Profile:
    values = iter(found)
    profile = {column: next(values) for column in STARTUP_COLUMNS}
    verification = {column: next(values) for column in VERIFICATION_COLUMNS}
    linked = {column: next(values) for column in CONNECTION_COLUMNS}
    has_verification, has_connection, founders, socials, monthly = values
    json_field = Startup._meta.get_field("technologies")
    profile["technologies"] = json_field.from_db_value(profile["technologies"], None, connection)
    profile["on_sale"] = bool(profile["on_sale"])  # SQLite: 0 or 1
    profile["founders"] = _array(founders)
    profile["socials"] = _array(socials)
    if has_verification is None:
        profile["verification"] = None
    else:
        verification["verified_at"] = plainsql.aware(verification["verified_at"])
        verification["provider_reported"] = json_field.from_db_value(
            verification["provider_reported"], None, connection
        )
        verification["monthly"] = [
            {**month, "month": date.fromisoformat(month["month"])} for month in _array(monthly)
        ]
        profile["verification"] = verification
    profile["connection"] = None if has_connection is None else linked
    return profile


def _array(value: str | list | None) -> list:
    """A JSON array column: text (SQLite), decoded already (PostgreSQL's json), or NULL (an
    aggregate over no row on PostgreSQL)."""
    if value is None:
        return []
    return json.loads(value) if isinstance(value, str) else value


@cache
def _statement(vendor: str) -> str:
    """The profile statement in `vendor`'s JSON functions (PostgreSQL or SQLite); only table
    and column names are formatted in, the slug is a parameter."""
    connection_model = Startup._meta.get_field("provider_connection").related_model
    startups, verifications, founders, socials, months, linked = (
        f'"{model._meta.db_table}"'
        for model in (Startup, Verification, Founder, Social, MonthlyRevenue, connection_model)
    )
    founder = _json_array(vendor, founders, FOUNDER_COLUMNS, "startup_id = s.id", "position", "id")
    social = _json_array(vendor, socials, SOCIAL_COLUMNS, "startup_id = s.id", "platform", "id")
    month = _json_array(vendor, months, MONTH_COLUMNS, "verification_id = v.id", "month")
    columns = ", ".join(
        [f"s.{c}" for c in STARTUP_COLUMNS]
        + [f"v.{c}" for c in VERIFICATION_COLUMNS]
        + [f"c.{c}" for c in CONNECTION_COLUMNS]
    )
    return (
        f"SELECT {columns}, v.id, c.id, ({founder}), ({social}), ({month})"  # noqa: S608
        f" FROM {startups} s LEFT JOIN {verifications} v ON v.startup_id = s.id"
        f" LEFT JOIN {linked} c ON c.startup_id = s.id"
        " WHERE s.slug = %s AND s.is_published"
    )


def _json_array(vendor: str, table: str, columns: tuple[str, ...], where: str, *order: str) -> str:
    """A correlated subquery: the rows of `table` meeting `where` (on the outer query's row),
    in `order`, as one JSON array of objects keyed by `columns` (in their order)."""
    pairs = ", ".join(f"'{column}', r.{column}" for column in columns)
    by = ", ".join(f"r.{column}" for column in order)
    if vendor == "postgresql":
        return (
            f"SELECT json_agg(json_build_object({pairs}) ORDER BY {by})"  # noqa: S608
            f" FROM {table} r WHERE r.{where}"
        )
    # SQLite (before 3.44) has no ORDER BY inside an aggregate: it aggregates an ordered
    # derived table, whose order its aggregates keep.
    return (
        f"SELECT json_group_array(json_object({pairs})) FROM "  # noqa: S608
        f"(SELECT * FROM {table} r WHERE r.{where} ORDER BY {by}) r"
    )
