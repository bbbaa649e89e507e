"""snake_case shapes of the dataset; REST camelCases them, the AI surface uses them as is.

Every documented key is always present: unknown values are None, never omitted.

One definition per output shape: the declared fields are what the OpenAPI document is generated
from and, for `Shape` serializers, what renders the data. Only the hot paths keep a hand-written
`to_representation` beside their declarations (the list rows, and the detail from plain profile
rows in `profile_data`, here; the AI matches in aisurface/serializers.py);
tests/restapi/test_openapi.py checks that those agree with their declarations, and every API
response the test suite gets is validated against the generated document.
"""

import copy
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cached_property
from typing import Any

from django.http import HttpRequest
from rest_framework import serializers

from core import plainsql
from core.formats import iso_month, iso_timestamp, site_url
from core.shapes import text, timestamp, whole
from startups.freshness import STATUSES, last_synced_at, methodology_url, status_of
from startups.models import Credential, RevenueSnapshot, Startup, Verification
from startups.profilerow import (
    ConnectionRow,
    Profile,
    VerificationRow,
    connection_row,
    profile_of,
    verification_row,
)
from startups.reported import (
    CREDENTIAL_HELP,
    REPORTED_HELP,
    ProviderReportedSerializer,
    provider_reported,
)
from startups.trust import SOURCE_HELP, SOURCES, revenue_source, shown_founders


def profile_url(slug: str, request: HttpRequest | None) -> str:
    """The public profile page of the startup named `slug`."""
    return f"{site_url(request)}/startups/{slug}"


def verification_of(startup: Startup) -> Verification | None:
    """The startup's verification record, or None for self-reported figures."""
    return getattr(startup, "verification", None)


def provider_account(verified: bool, connection: ConnectionRow | None) -> dict | None:
    """The verified startup's provider account (`provider_account`) when the provider named it."""
    if not verified or connection is None:
        return None
    name, domain = connection["account_name"], connection["account_domain"]
    return {"name": name, "domain": domain} if name or domain else None


def growth_30d(mrr: int | None, growth: float | None) -> float | None:
    """The stored 30-day MRR growth; None once the startup has no MRR (disconnected)."""
    return None if mrr is None else growth


def _synced_at(value: datetime | str | None) -> str | None:
    """The list's `synced_at` annotation (a raw SQL path may hand SQLite's text form back)."""
    return iso_timestamp(plainsql.aware(value))


def _clone(field: serializers.Field) -> serializers.Field:
    """A shallow copy of `field` (what copy.copy makes, without its pickling protocol)."""
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


# An output shape rendered from its declared fields (the ones the document is made of). A field
# renders the instance's attribute of its name (or its `source`), as in any DRF serializer; a
# value derived from the instance comes from the serializer's `get_<field name>(instance)`, as
# with DRF's SerializerMethodField, while the field keeps its declared type and nullability for
# the document. None renders as null. (Comments, not a docstring: docstrings of serializers are
# descriptions in the OpenAPI document.)
class Shape(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        # DRF deep-copies every declared field for every serializer instance: most of what a
        # detail took to render. A plain field keeps no state of its own while it renders
        # (binding sets attributes on the copy), so a shallow copy does; nested serializers are
        # still copied whole.
        return {
            name: copy.deepcopy(field)
            if isinstance(field, serializers.BaseSerializer)
            else _clone(field)
            for name, field in self._declared_fields.items()
        }

    @cached_property
    def _renderers(self) -> list[tuple[str, serializers.Field, Callable[[Any], Any] | None]]:
        """Per readable field: its name, itself and its `get_<name>` (looked up once, not per
        instance rendered: a list renders many). DRF's own `get_fields`, `get_value`... are
        not derivations."""
        return [
            (field.field_name, field, self._derivation(f"get_{field.field_name}"))
            for field in self._readable_fields
        ]

    def _derivation(self, name: str) -> Callable[[Any], Any] | None:
        return None if hasattr(serializers.Serializer, name) else getattr(self, name, None)

    def to_representation(self, instance: Any) -> dict:
        data = {}
        for name, field, derive in self._renderers:
            value = field.get_attribute(instance) if derive is None else derive(instance)
            data[name] = None if value is None else field.to_representation(value)
        return data


# Help shared by the list's and the detail's revenue objects.
_LAST_SYNCED_AT = "Last successful sync from the provider; null when not verified."
_GROWTH_30D = (
    "MRR change against the daily snapshot 30 days earlier, as a ratio (0.12 = +12%); null "
    "without a snapshot that old or without MRR."
)


class ListRevenueSerializer(serializers.Serializer):
    mrr = whole(null=True, help_text="MRR in USD.")
    arr = whole(null=True, help_text="ARR in USD.")
    verified = serializers.BooleanField(
        help_text="True when the numbers come from a connected payment provider (see "
        "`verification.provider` on the detail; `demo` marks the demo dataset); false when "
        "self-reported or from public sources."
    )
    source = serializers.ChoiceField(choices=list(SOURCES.values()), help_text=SOURCE_HELP)
    last_synced_at = timestamp(null=True, help_text=_LAST_SYNCED_AT)
    growth_30d = serializers.FloatField(allow_null=True, help_text=_GROWTH_30D)


# A list row is rendered by hand: a page renders up to 50 of them per request.
class StartupListSerializer(serializers.Serializer):
    name = text()
    slug = text(help_text="Stable identifier used in the single-startup path.")
    icon = text(null=True, help_text="Logo URL.")
    description = text(null=True)
    website = text(null=True)
    category = text(null=True, help_text="Primary category.")
    founder_name = text(null=True, help_text="A founder's name, when known.")
    revenue = ListRevenueSerializer()
    on_sale = serializers.BooleanField(help_text="Listed for acquisition on the marketplace.")
    rank = whole(
        null=True,
        help_text="Position by MRR within the filtered result set (1 is highest); null without "
        "MRR.",
    )
    updated_at = timestamp(help_text="When the startup's data last changed (change feed).")
    profile_url = text(help_text="Public profile page; credit it where the data is shown.")

    def to_representation(self, startup: Startup) -> dict:
        # The list's rows carry `synced_at` (selectors.with_synced_at); others read the relation.
        if hasattr(startup, "synced_at"):
            synced, provider = startup.synced_at, getattr(startup, "synced_provider", None)
        else:
            verification = verification_of(startup)
            synced = last_synced_at(verification)
            provider = verification.provider if verification else None
        return {
            "name": startup.name,
            "slug": startup.slug,
            "icon": startup.icon,
            "description": startup.description,
            "website": startup.website,
            "category": startup.category,
            "founder_name": startup.founder_name,
            "revenue": {
                "mrr": startup.mrr,
                "arr": startup.arr,
                "verified": synced is not None,
                "source": revenue_source(provider if synced is not None else None),
                "last_synced_at": _synced_at(synced),
                "growth_30d": growth_30d(startup.mrr, startup.growth_30d),
            },
            "on_sale": startup.on_sale,
            "rank": getattr(startup, "rank", None),
            "updated_at": iso_timestamp(startup.updated_at),
            "profile_url": profile_url(startup.slug, self.context.get("request")),
        }


def shape_list_rows(startups: Iterable[Startup], request: HttpRequest | None = None) -> list[dict]:
    """The list rows of `startups` (snake_case): what `StartupListSerializer(many=True).data`
    gives, without DRF's ListSerializer, whose child and parent refer to each other (a
    reference cycle that kept every served page, its rows included, alive until the garbage
    collector came by: core/cycles.py)."""
    shape = StartupListSerializer(context={"request": request})
    return [shape.to_representation(startup) for startup in startups]


class MonthlyRevenueSerializer(Shape):
    month = serializers.RegexField(r"^[0-9]{4}-[0-9]{2}$", help_text="YYYY-MM")
    gross = whole()
    refunds = whole()
    net = whole(help_text="gross - refunds (fees are not subtracted).")


class VerificationSerializer(Shape):
    # How fresh the figures are comes first, then the figures.
    status = serializers.ChoiceField(
        choices=STATUSES,
        help_text="`ok`: synced within VERIFICATION_STALE_HOURS (6 by default); `stale`: the last "
        "successful sync is older; `key_revoked`: the provider refused the key; `error`: the last "
        "sync failed. The figures are the last good ones, never zeroed.",
    )
    last_synced_at = timestamp(help_text="Last successful sync from the provider.")
    methodology = text(
        help_text="Absolute URL of the published methodology version these figures were computed "
        "with (`/docs/methodology/<methodologyVersion>`)."
    )
    methodology_version = text(
        help_text="The methodology version (`v1`, `v2`, ...) these figures were computed with; "
        "stored figures keep it until the next sync recomputes them under the current version."
    )
    provider = text(help_text="Payment provider the numbers come from.")
    level = text(help_text="Verification level, e.g. `verified`.")
    verified_at = timestamp()
    currency = text()
    mrr = whole(null=True, help_text="Null when the provider has no subscription data.")
    arr = whole(null=True)
    total_revenue = whole()
    last_30_days = whole(help_text="Revenue over the last 30 days.")
    customers = whole()
    history_months = whole(help_text="Months of history (rows in `monthly`).")
    monthly = MonthlyRevenueSerializer(many=True)
    credential = serializers.ChoiceField(
        choices=Credential.values, allow_null=True, help_text=CREDENTIAL_HELP
    )
    provider_reported = ProviderReportedSerializer(allow_null=True, help_text=REPORTED_HELP)

    def to_representation(self, verification: Verification) -> dict:
        connection = connection_row(verification.startup)
        return verification_data(
            verification_row(verification),
            connection and connection["status"],
            self.context.get("request"),
        )


class FounderSerializer(Shape):
    name = text()
    title = text(null=True)
    twitter = text(null=True)
    linkedin = text(null=True)


class SocialSerializer(Shape):
    platform = text()
    url = text()


class DetailRevenueSerializer(Shape):
    mrr = whole(null=True, help_text="MRR in USD.")
    arr = whole(null=True, help_text="ARR in USD.")
    currency = text(help_text="Currency code of the revenue figures.")
    verified = serializers.BooleanField(
        help_text="True when the numbers come from a connected payment provider."
    )
    source = serializers.ChoiceField(choices=list(SOURCES.values()), help_text=SOURCE_HELP)
    growth_30d = serializers.FloatField(allow_null=True, help_text=_GROWTH_30D)
    last_synced_at = timestamp(null=True, help_text=_LAST_SYNCED_AT)


class ProviderAccountSerializer(Shape):
    name = text(null=True, source="account_name", help_text="Its business name there.")
    domain = text(null=True, source="account_domain", help_text="Its website's domain there.")


class StartupDetailSerializer(Shape):
    name = text()
    slug = text()
    icon = text(null=True)
    description = text(null=True)
    website = text(null=True)
    category = text(null=True)
    business_type = text(null=True, help_text="For example B2B or B2C.")
    founded = whole(null=True, help_text="Year founded.")
    country = text(null=True)
    team_size = text(null=True)
    founders = FounderSerializer(many=True)
    technologies = serializers.ListField(child=text())
    socials = SocialSerializer(many=True)
    revenue = DetailRevenueSerializer(source="*")
    verification = VerificationSerializer(
        allow_null=True, help_text="Null for self-reported startups."
    )
    provider_account = ProviderAccountSerializer(
        allow_null=True,
        help_text="The payment-provider account behind the verified figures, as the provider "
        "names it (it may differ from the startup's name); null when not verified or when the "
        "provider gives neither a name nor a domain.",
    )
    on_sale = serializers.BooleanField()
    asking_price = whole(null=True, help_text="USD, when listed for sale.")
    profile_url = text(help_text="Public profile page; credit it where the data is shown.")

    def to_representation(self, startup: Startup | Profile) -> dict:
        profile = startup if isinstance(startup, dict) else profile_of(startup)
        return profile_data(profile, self.context.get("request"))


# The detail is shaped by hand from plain rows (startups/profilerow.py), as the list rows are:
# the declarations above describe it for the document, and tests/restapi/test_openapi.py checks
# that the two agree. These are the one place a profile is shaped: the REST detail, the public
# pages and the attestation's figures all come from here.
_REPORTED = ProviderReportedSerializer()


def profile_data(profile: Profile, request: HttpRequest | None) -> dict:
    """The detail document (snake_case) of a startup's profile rows."""
    verification, connection = profile["verification"], profile["connection"]
    provider = verification["provider"] if verification is not None else None
    synced = verification["verified_at"] if verification is not None else None
    return {
        "name": profile["name"],
        "slug": profile["slug"],
        "icon": profile["icon"],
        "description": profile["description"],
        "website": profile["website"],
        "category": profile["category"],
        "business_type": profile["business_type"],
        "founded": profile["founded"],
        "country": profile["country"],
        "team_size": profile["team_size"],
        "founders": [
            {
                "name": founder["name"],
                "title": founder["title"],
                "twitter": founder["twitter"],
                "linkedin": founder["linkedin"],
            }
            for founder in shown_founders(profile["founders"], profile["founder_name"])
        ],
        "technologies": [
            None if item is None else str(item) for item in profile["technologies"] or []
        ],
        "socials": [
            {"platform": social["platform"], "url": social["url"]} for social in profile["socials"]
        ],
        "revenue": {
            "mrr": profile["mrr"],
            "arr": profile["arr"],
            "currency": profile["currency"],
            "verified": verification is not None,
            "source": revenue_source(provider),
            "growth_30d": growth_30d(profile["mrr"], profile["growth_30d"]),
            "last_synced_at": iso_timestamp(synced),
        },
        "verification": None
        if verification is None
        else verification_data(verification, connection and connection["status"], request),
        "provider_account": provider_account(verification is not None, connection),
        "on_sale": profile["on_sale"],
        "asking_price": profile["asking_price"],
        "profile_url": profile_url(profile["slug"], request),
    }


def verification_data(
    verification: VerificationRow, connection_status: str | None, request: HttpRequest | None
) -> dict:
    """The detail's `verification` object (`connection_status`: the provider connection's)."""
    monthly = verification["monthly"]
    reported = provider_reported(
        verification["provider_reported"],
        mrr=verification["mrr"],
        last_30_days=verification["last_30_days"],
    )
    return {
        "status": status_of(verification["verified_at"], connection_status),
        "last_synced_at": iso_timestamp(verification["verified_at"]),
        "methodology": methodology_url(request, verification["methodology_version"]),
        "methodology_version": verification["methodology_version"],
        "provider": verification["provider"],
        "level": verification["level"],
        "verified_at": iso_timestamp(verification["verified_at"]),
        "currency": verification["currency"],
        "mrr": verification["mrr"],
        "arr": verification["arr"],
        "total_revenue": verification["total_revenue"],
        "last_30_days": verification["last_30_days"],
        "customers": verification["customers"],
        "history_months": len(monthly),
        "monthly": [
            {
                "month": iso_month(month["month"]),
                "gross": month["gross"],
                "refunds": month["refunds"],
                "net": month["net"],
            }
            for month in monthly
        ],
        "credential": verification["credential"],
        "provider_reported": None if reported is None else _REPORTED.to_representation(reported),
    }


class SnapshotSerializer(serializers.Serializer):
    date = serializers.DateField(help_text="UTC date of the last successful sync that day.")
    mrr = whole(null=True)
    arr = whole(null=True)
    customers = whole()
    last_30_days = whole()

    def to_representation(self, snapshot: RevenueSnapshot) -> dict:
        # Rendered by hand, like the list's rows: a history renders up to a year of days.
        return {
            "date": snapshot.date.isoformat(),
            "mrr": snapshot.mrr,
            "arr": snapshot.arr,
            "customers": snapshot.customers,
            "last_30_days": snapshot.last_30_days,
        }


def shape_snapshots(snapshots: Iterable[RevenueSnapshot]) -> list[dict]:
    """The history's days (snake_case), without DRF's ListSerializer (see shape_list_rows)."""
    shape = SnapshotSerializer()
    return [shape.to_representation(snapshot) for snapshot in snapshots]
