"""snake_case shapes of the dataset; REST camelCases them, the AI surface uses them as is.

Every documented key is always present: unknown values are None, never omitted.

Output serializers render with hand-written `to_representation` (the hot path stays a dict
literal) and *declare* the same fields, with their nullability, for the OpenAPI document. The
declarations are never used to render; tests/test_openapi.py checks that both agree and every
API response the test suite gets is validated against the generated document.
"""

import math
import re
from datetime import UTC, date, datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework import serializers

from openstartup.formats import iso_month, iso_timestamp, site_url
from quota.plans import FREE, PRO
from startups.freshness import STATUSES, last_synced_at, methodology_url, verification_status
from startups.models import Startup, Verification
from startups.selectors import (
    DEFAULT_SORT,
    SORT_ORDERS,
    After,
    StartupFilters,
    decode_cursor,
    website_domain,
)

# Bounds that keep any number a client sends inside what both databases can compare.
_BIGINT_MAX = 2**63 - 1
MAX_PAGE = 1_000_000
MAX_TEXT = 200
MAX_CURSOR = 4096  # a cursor holds a name and a slug of up to 200 characters each
MAX_FIELDS = 500
MAX_WARNINGS = 20


class LenientField(serializers.Field):
    """A query parameter that never fails validation: garbage becomes `None` (the default).

    `openapi` holds what the OpenAPI document says about the parameter (type, default, range);
    it documents the rule, the parser below applies it leniently.
    """

    openapi: dict[str, Any] = {"type": "string"}

    def __init__(self, *, openapi: dict[str, Any] | None = None, **kwargs: Any):
        self.openapi = {**self.openapi, **(openapi or {})}
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        try:
            return self.parse(str(data).strip())
        except (ValueError, OverflowError):
            return None

    def parse(self, raw: str) -> Any:
        raise NotImplementedError


class LenientInteger(LenientField):
    openapi = {"type": "integer"}

    def parse(self, raw: str) -> int | None:
        return int(raw) if raw else None


class LenientMoney(LenientField):
    """A whole-dollar bound; decimals are accepted, NaN and infinities ignored."""

    openapi = {"type": "number"}

    def __init__(self, *, rounding: str, **kwargs: Any):
        self.rounding = rounding
        super().__init__(**kwargs)

    def parse(self, raw: str) -> int | None:
        value = float(raw)
        if not math.isfinite(value):
            return None
        whole = math.ceil(value) if self.rounding == "up" else math.floor(value)
        return max(-_BIGINT_MAX, min(_BIGINT_MAX, whole))


class LenientBoolean(LenientField):
    openapi = {"type": "boolean"}

    def parse(self, raw: str) -> bool | None:
        return {"true": True, "false": False}.get(raw.lower())


class LenientChoice(LenientField):
    def __init__(self, *, choices: list[str], **kwargs: Any):
        self.choices = choices
        super().__init__(**kwargs)
        self.openapi = {"type": "string", "enum": list(choices), **self.openapi}

    def parse(self, raw: str) -> str | None:
        return raw if raw in self.choices else None


class LenientText(LenientField):
    def parse(self, raw: str) -> str | None:
        # NUL cannot be stored or compared by PostgreSQL; it never matches anything anyway.
        text = raw.replace("\x00", "")[:MAX_TEXT]
        return text or None


class LenientDomain(LenientField):
    def parse(self, raw: str) -> str | None:
        return website_domain(raw[:MAX_TEXT])


class LenientTimestamp(LenientField):
    """An ISO 8601 timestamp (`2026-11-01T00:00:00Z`; no offset means UTC) or date."""

    openapi = {"type": "string", "format": "date-time"}

    def parse(self, raw: str) -> datetime | None:
        if not raw:
            return None
        moment = parse_datetime(raw)
        if moment is None and (day := parse_date(raw)) is not None:
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        if moment is None:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class LenientCursor(LenientField):
    openapi = {"type": "string", "maxLength": MAX_CURSOR}

    def parse(self, raw: str) -> After | None:
        return decode_cursor(raw) if 0 < len(raw) <= MAX_CURSOR else None


class StartupFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/v1/startups. Invalid values are ignored, never errors."""

    page = LenientInteger(
        required=False,
        openapi={"default": 1, "minimum": 1, "maximum": MAX_PAGE},
        help_text="Page number, from 1. Below 1 or not a number means 1; past the end gives an "
        "empty `data` with `hasMore: false`.",
    )
    limit = LenientInteger(
        required=False,
        openapi={"default": FREE.default_limit, "minimum": 1, "maximum": PRO.max_limit},
        help_text=f"Results per page: 1 to the plan maximum ({FREE.max_limit} Free, "
        f"{PRO.max_limit} Pro). Values out of range are clamped, never refused; when lowered, "
        "`meta.notice` says so. Not a number means the default.",
    )
    sort = LenientChoice(
        choices=list(SORT_ORDERS),
        required=False,
        openapi={"default": DEFAULT_SORT},
        help_text="Order. Startups without MRR sort last (`growth-desc`: without `growth30d`); "
        "an unknown value means the default.",
    )
    q = LenientText(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text="Search text matched against name, category and description (case-insensitive; "
        f"cut to {MAX_TEXT} characters; `%`, `_` and `\\` match literally).",
    )
    category = LenientText(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text="Partial, case-insensitive category match.",
    )
    onSale = LenientBoolean(  # noqa: N815 - the wire name
        required=False,
        source="on_sale",
        help_text="`true`: only startups listed for acquisition; `false`: only those not listed; "
        "omitted or any other value: all.",
    )
    minMrr = LenientMoney(  # noqa: N815
        rounding="up",
        required=False,
        source="min_mrr",
        help_text="Minimum MRR in USD, inclusive (decimals round up; not a finite number: "
        "ignored).",
    )
    maxMrr = LenientMoney(  # noqa: N815
        rounding="down",
        required=False,
        source="max_mrr",
        help_text="Maximum MRR in USD, inclusive (decimals round down; not a finite number: "
        "ignored).",
    )

    verified = LenientBoolean(
        required=False,
        help_text="`true`: only startups whose figures come from a connected payment provider "
        "(`revenue.verified`); `false`: only self-reported or public figures; omitted or any "
        "other value: all.",
    )
    cursor = LenientCursor(
        required=False,
        help_text="Cursor paging: `meta.nextCursor` of the previous page. The next page starts "
        "after the last startup that page showed, in the same order (the cursor carries its "
        "`sort`), so rows inserted or moved meanwhile never make others repeat or go missing. "
        "`page` is ignored with a cursor; an invalid cursor is ignored (first page) with a "
        "warning.",
    )
    website = LenientDomain(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text="A domain (`acme.com`) or address: startups whose website is on that domain or "
        "a subdomain of it (`acme.com` matches `https://www.acme.com/pricing`).",
    )
    country = LenientText(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text="Headquarters country, case-insensitive exact match (e.g. `Germany`).",
    )
    updatedSince = LenientTimestamp(  # noqa: N815
        required=False,
        source="updated_since",
        help_text="Change feed: only startups changed at or after this moment (ISO 8601; no "
        "offset means UTC). Use with `sort=updated-desc`; each item has `updatedAt`.",
    )
    fields = LenientText(
        required=False,
        openapi={"maxLength": MAX_FIELDS},
        help_text="Sparse fieldset: comma-separated item fields to return, nested ones dotted "
        "(`name,slug,revenue.mrr`). Only those keys are sent; unknown names are ignored with a "
        "warning.",
    )

    def filters(self) -> StartupFilters:
        data = self.validated_data
        after = data.get("cursor")
        return StartupFilters(
            q=data.get("q"),
            category=data.get("category"),
            on_sale=data.get("on_sale"),
            min_mrr=data.get("min_mrr"),
            max_mrr=data.get("max_mrr"),
            verified=data.get("verified"),
            website=data.get("website"),
            country=data.get("country"),
            updated_since=data.get("updated_since"),
            # A cursor belongs to the order it was made in.
            sort=after.sort if after else data.get("sort") or DEFAULT_SORT,
        )

    def after(self) -> After | None:
        return self.validated_data.get("cursor")

    def warnings(self) -> list[str]:
        """What this request sent that was ignored (meta.warnings): unknown parameters and
        values that are not valid for their parameter."""
        return ignored_parameters(self, self.initial_data, self.validated_data)

    def page_number(self) -> int:
        page = self.validated_data.get("page") or 1
        return max(1, min(page, MAX_PAGE))

    def requested_limit(self) -> int | None:
        return self.validated_data.get("limit")


class StartupExportFilterSerializer(StartupFilterSerializer):
    """Query parameters of the NDJSON export: the list's, without paging."""

    page = None
    limit = None
    cursor = None


def _quoted(raw: str) -> str:
    return repr(raw if len(raw) <= 60 else raw[:60] + "...")


def ignored_parameters(serializer: serializers.Serializer, query, data: dict) -> list[str]:
    """Warnings naming every query parameter the lenient `serializer` ignored."""
    declared = serializer.fields
    found = []
    for name in query:
        if name not in declared:
            found.append(f"Unknown query parameter {_quoted(name)} was ignored.")
            continue
        raw = str(query.get(name, "")).strip()
        field = declared[name]
        if raw and data.get(field.source) is None:
            if name == "sort":
                found.append(
                    f"sort {_quoted(raw)} is not one of {', '.join(SORT_ORDERS)}; "
                    f"{DEFAULT_SORT} was used."
                )
            else:
                found.append(f"{name}={_quoted(raw)} is not a valid value and was ignored.")
    after = data.get("cursor")
    if after is not None:
        if "page" in query:
            found.append("page was ignored: the cursor says where the page starts.")
        sort = data.get("sort")
        if sort and sort != after.sort:
            found.append(f"sort {sort} was ignored: the cursor continues {after.sort}.")
    return found[:MAX_WARNINGS]


class StartupBrowseFilterSerializer(StartupFilterSerializer):
    """Query parameters of the public /startups/ page: the API's (`verified` included)."""


def profile_url(startup: Startup, request) -> str:
    return f"{site_url(request)}/startups/{startup.slug}"


def verification_of(startup: Startup) -> Verification | None:
    """The startup's verification record, or None for self-reported figures."""
    return getattr(startup, "verification", None)


def headline_revenue(startup: Startup) -> dict:
    """The headline figures and whether a provider verified them (detail, AI, MCP)."""
    return {
        "mrr": startup.mrr,
        "arr": startup.arr,
        "currency": startup.currency,
        "verified": verification_of(startup) is not None,
        "growth_30d": growth_30d(startup),
    }


def growth_30d(startup: Startup) -> float | None:
    """The stored 30-day MRR growth; None once the startup has no MRR (disconnected)."""
    return None if startup.mrr is None else startup.growth_30d


def _synced_at(value: datetime | str | None) -> str | None:
    """The list's `synced_at` annotation (a raw SQL path may hand SQLite's text form back)."""
    if isinstance(value, str):
        value = parse_datetime(value)
        if value is not None and timezone.is_naive(value):
            value = timezone.make_aware(value, UTC)
    return iso_timestamp(value)


def freshness(startup: Startup, request: HttpRequest | None) -> dict:
    """status, last_synced_at and methodology of a verified startup (None each otherwise)."""
    verification = verification_of(startup)
    return {
        "status": verification_status(startup),
        "last_synced_at": iso_timestamp(last_synced_at(verification)),
        "methodology": methodology_url(request) if verification is not None else None,
    }


# Declarations of the output shapes (see the module docstring). Helpers keep them short.
def _text(**kwargs: Any) -> serializers.CharField:
    """A string; `null=True` when the value may be null."""
    return serializers.CharField(allow_null=kwargs.pop("null", False), **kwargs)


def _whole(**kwargs: Any) -> serializers.IntegerField:
    """A whole number (dollars, counts, years); `null=True` when the value may be null."""
    return serializers.IntegerField(allow_null=kwargs.pop("null", False), **kwargs)


def _timestamp(**kwargs: Any) -> serializers.DateTimeField:
    return serializers.DateTimeField(allow_null=kwargs.pop("null", False), **kwargs)


class ListRevenueSerializer(serializers.Serializer):
    mrr = _whole(null=True, help_text="MRR in USD.")
    arr = _whole(null=True, help_text="ARR in USD.")
    verified = serializers.BooleanField(
        help_text="True when the numbers come from a connected payment provider (see "
        "`verification.provider` on the detail; `demo` marks the demo dataset); false when "
        "self-reported or from public sources."
    )
    last_synced_at = _timestamp(
        null=True, help_text="Last successful sync from the provider; null when not verified."
    )
    growth_30d = serializers.FloatField(
        allow_null=True,
        help_text="MRR change against the daily snapshot 30 days earlier, as a ratio (0.12 = "
        "+12%); null without a snapshot that old or without MRR.",
    )


class StartupListSerializer(serializers.Serializer):
    name = _text()
    slug = _text(help_text="Stable identifier used in the single-startup path.")
    icon = _text(null=True, help_text="Logo URL.")
    description = _text(null=True)
    website = _text(null=True)
    category = _text(null=True, help_text="Primary category.")
    founder_name = _text(null=True, help_text="A founder's name, when known.")
    revenue = ListRevenueSerializer()
    on_sale = serializers.BooleanField(help_text="Listed for acquisition on the marketplace.")
    rank = _whole(
        null=True,
        help_text="Position by MRR within the filtered result set (1 is highest); null without "
        "MRR.",
    )
    updated_at = _timestamp(help_text="When the startup's data last changed (change feed).")

    def to_representation(self, startup: Startup) -> dict:
        # The list's rows carry `synced_at` (selectors.with_synced_at); others read the relation.
        synced = getattr(startup, "synced_at", None)
        if not hasattr(startup, "synced_at"):
            synced = last_synced_at(verification_of(startup))
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
                "last_synced_at": _synced_at(synced),
                "growth_30d": growth_30d(startup),
            },
            "on_sale": startup.on_sale,
            "rank": getattr(startup, "rank", None),
            "updated_at": iso_timestamp(startup.updated_at),
        }


class MonthlyRevenueSerializer(serializers.Serializer):
    month = serializers.RegexField(r"^[0-9]{4}-[0-9]{2}$", help_text="YYYY-MM")
    gross = _whole()
    refunds = _whole()
    net = _whole(help_text="gross - refunds (fees are not subtracted).")


class VerificationSerializer(serializers.Serializer):
    provider = _text(help_text="Payment provider the numbers come from.")
    level = _text(help_text="Verification level, e.g. `verified`.")
    verified_at = _timestamp()
    currency = _text()
    mrr = _whole(null=True, help_text="Null when the provider has no subscription data.")
    arr = _whole(null=True)
    total_revenue = _whole()
    last_30_days = _whole(help_text="Revenue over the last 30 days.")
    customers = _whole()
    history_months = _whole(help_text="Months of history (rows in `monthly`).")
    monthly = MonthlyRevenueSerializer(many=True)
    status = serializers.ChoiceField(
        choices=STATUSES,
        help_text="`ok`: synced within VERIFICATION_STALE_HOURS (6 by default); `stale`: the last "
        "successful sync is older; `key_revoked`: the provider refused the key; `error`: the last "
        "sync failed. The figures are the last good ones, never zeroed.",
    )
    last_synced_at = _timestamp(help_text="Last successful sync from the provider.")
    methodology = _text(help_text="Absolute URL of the published, versioned methodology.")

    def to_representation(self, verification: Verification) -> dict:
        monthly = list(verification.monthly.all())
        return {
            **freshness(verification.startup, self.context.get("request")),
            "provider": verification.provider,
            "level": verification.level,
            "verified_at": iso_timestamp(verification.verified_at),
            "currency": verification.currency,
            "mrr": verification.mrr,
            "arr": verification.arr,
            "total_revenue": verification.total_revenue,
            "last_30_days": verification.last_30_days,
            "customers": verification.customers,
            "history_months": len(monthly),
            "monthly": [
                {
                    "month": iso_month(row.month),
                    "gross": row.gross,
                    "refunds": row.refunds,
                    "net": row.net,
                }
                for row in monthly
            ],
        }


class FounderSerializer(serializers.Serializer):
    name = _text()
    title = _text(null=True)
    twitter = _text(null=True)
    linkedin = _text(null=True)


class SocialSerializer(serializers.Serializer):
    platform = _text()
    url = _text()


class DetailRevenueSerializer(ListRevenueSerializer):
    currency = _text(help_text="Currency code of the revenue figures.")
    verified = serializers.BooleanField(
        help_text="True when the numbers come from a connected payment provider."
    )


class StartupDetailSerializer(serializers.Serializer):
    name = _text()
    slug = _text()
    icon = _text(null=True)
    description = _text(null=True)
    website = _text(null=True)
    category = _text(null=True)
    business_type = _text(null=True, help_text="For example B2B or B2C.")
    founded = _whole(null=True, help_text="Year founded.")
    country = _text(null=True)
    team_size = _text(null=True)
    founders = FounderSerializer(many=True)
    technologies = serializers.ListField(child=_text())
    socials = SocialSerializer(many=True)
    revenue = DetailRevenueSerializer()
    verification = VerificationSerializer(
        allow_null=True, help_text="Null for self-reported startups."
    )
    on_sale = serializers.BooleanField()
    asking_price = _whole(null=True, help_text="USD, when listed for sale.")
    profile_url = _text(help_text="Public profile page; credit it where the data is shown.")

    def to_representation(self, startup: Startup) -> dict:
        verification = verification_of(startup)
        return {
            "name": startup.name,
            "slug": startup.slug,
            "icon": startup.icon,
            "description": startup.description,
            "website": startup.website,
            "category": startup.category,
            "business_type": startup.business_type,
            "founded": startup.founded,
            "country": startup.country,
            "team_size": startup.team_size,
            "founders": [
                {
                    "name": founder.name,
                    "title": founder.title,
                    "twitter": founder.twitter,
                    "linkedin": founder.linkedin,
                }
                for founder in startup.founders.all()
            ],
            "technologies": list(startup.technologies or []),
            "socials": [
                {"platform": social.platform, "url": social.url} for social in startup.socials.all()
            ],
            "revenue": {
                **headline_revenue(startup),
                "last_synced_at": iso_timestamp(last_synced_at(verification)),
            },
            "verification": (
                VerificationSerializer(verification, context=self.context).data
                if verification is not None
                else None
            ),
            "on_sale": startup.on_sale,
            "asking_price": startup.asking_price,
            "profile_url": profile_url(startup, self.context.get("request")),
        }


class QuotaMetaSerializer(serializers.Serializer):
    limit = _whole(help_text="Records included this month.")
    used = _whole()
    remaining = _whole()
    resets_at = _timestamp(help_text="1st of next month, 00:00 UTC.")


class StartupPageMetaSerializer(serializers.Serializer):
    total = _whole(help_text="Matching startups across all pages.")
    page = _whole(null=True, help_text="Current page; null when paging by `cursor`.")
    limit = _whole(help_text="Results per page actually applied.")
    has_more = serializers.BooleanField(help_text="True while more pages follow.")
    plan = serializers.ChoiceField(choices=[FREE.name, PRO.name])
    max_limit = _whole(help_text="Most records one request can return on the plan.")
    quota = QuotaMetaSerializer(required=False, help_text="Free plan only.")
    notice = _text(
        required=False,
        help_text="Only when `limit` was lowered to the plan maximum or to the records left.",
    )
    warnings = serializers.ListField(
        child=_text(),
        required=False,
        help_text="Only when something the request sent was ignored: one sentence per unknown "
        "query parameter, invalid value (an unknown `sort` included) or unknown `fields` name. "
        "The request is still answered (invalid parameters are never errors).",
    )
    next_cursor = _text(
        null=True,
        help_text="Send as `cursor` for the next page (cursor paging); null on the last page.",
    )


class StartupPageSerializer(serializers.Serializer):
    """GET /api/v1/startups: `{data, meta}` (declared for the OpenAPI document)."""

    data = StartupListSerializer(many=True)
    meta = StartupPageMetaSerializer()


class CategoryCountSerializer(serializers.Serializer):
    name = _text(help_text="A primary category, as startups give it (`category=` matches it).")
    count = _whole(help_text="Published startups with this primary category.")

    def to_representation(self, row: dict) -> dict:
        return {"name": row["category"], "count": row["count"]}


class CategoryListSerializer(serializers.Serializer):
    """GET /api/v1/categories: `{data}` (declared for the OpenAPI document)."""

    data = CategoryCountSerializer(many=True)


class StartupEnvelopeSerializer(serializers.Serializer):
    """GET /api/v1/startups/{slug}: `{data}` (declared for the OpenAPI document)."""

    data = StartupDetailSerializer()


class LenientDate(LenientField):
    openapi = {"type": "string", "format": "date"}

    def parse(self, raw: str) -> date | None:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", raw):
            return None
        return date.fromisoformat(raw)


class HistoryFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/v1/startups/{slug}/history; invalid dates are ignored."""

    # `from` is a Python keyword: declared under its wire name below.
    to = LenientDate(
        required=False,
        help_text="Last UTC date to include (YYYY-MM-DD, inclusive); anything else: no bound.",
    )

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = LenientDate(
            required=False,
            help_text="First UTC date to include (YYYY-MM-DD, inclusive); anything else: no bound.",
        )
        return fields

    def bounds(self) -> tuple[date | None, date | None]:
        return self.validated_data.get("from"), self.validated_data.get("to")


class SnapshotSerializer(serializers.Serializer):
    date = serializers.DateField(help_text="UTC date of the last successful sync that day.")
    mrr = _whole(null=True)
    arr = _whole(null=True)
    customers = _whole()
    last_30_days = _whole()

    def to_representation(self, snapshot) -> dict:
        return {
            "date": snapshot.date.isoformat(),
            "mrr": snapshot.mrr,
            "arr": snapshot.arr,
            "customers": snapshot.customers,
            "last_30_days": snapshot.last_30_days,
        }


class HistoryMetaSerializer(serializers.Serializer):
    slug = _text()
    count = _whole(help_text="Snapshots in `data`.")
    to = serializers.DateField(allow_null=True, help_text="The `to` bound applied (null: none).")
    plan = serializers.ChoiceField(choices=[FREE.name, PRO.name])
    max_limit = _whole()
    quota = QuotaMetaSerializer(required=False, help_text="Free plan only.")

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = serializers.DateField(
            allow_null=True, help_text="The `from` bound applied (null: none)."
        )
        return fields


class HistoryPageSerializer(serializers.Serializer):
    """GET /api/v1/startups/{slug}/history: daily snapshots, oldest first."""

    data = SnapshotSerializer(many=True)
    meta = HistoryMetaSerializer()


class AttestationSerializer(serializers.Serializer):
    jws = _text(
        help_text="Compact JWS (RFC 7515), EdDSA/Ed25519 (RFC 8037). Payload: `slug`, every field "
        "of the detail's `verification` object (camelCase, monthly rows included) and "
        "`issuedAt`. Verify against /.well-known/jwks.json."
    )
    key_id = _text(help_text="`kid` of the signing key in /.well-known/jwks.json.")


class AttestationEnvelopeSerializer(serializers.Serializer):
    data = AttestationSerializer()


class AiDiscoveryFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/ai/discovery. Invalid values are ignored, never errors."""

    category = LenientText(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text='Slug-style category word: `developer-tools` matches "Developer Tools"; also '
        "matches secondary categories.",
    )
    industry = LenientText(
        required=False,
        openapi={"maxLength": MAX_TEXT},
        help_text="Slug-style industry word.",
    )
    verified = LenientBoolean(
        required=False,
        help_text="`true`: only startups whose owner account is verified; `false`: only those "
        "whose owner is not; any other value is ignored.",
    )

    @classmethod
    def parse(cls, query_params) -> dict[str, Any]:
        """The filters, through the declared (lenient, never failing) fields, without building
        a serializer instance: this runs on every cached /api/ai/discovery hit."""
        return {
            name: field.to_internal_value(query_params[name]) if name in query_params else None
            for name, field in cls._declared_fields.items()
        }


# schema.org type of every AI profile: a startup is an organization (its products are not
# modelled separately, so SoftwareApplication would claim more than we know).
AI_PROFILE_TYPE = "Organization"
OWNER_VERIFIED = "owner_verified"
UNVERIFIED = "unverified"
# revenue.source when no payment provider is connected.
SELF_REPORTED = "self_reported"
PUBLIC_SOURCES = "public_sources"


def ai_api_url(startup: Startup, request: HttpRequest | None) -> str:
    return site_url(request) + reverse("ai-profile", kwargs={"slug": startup.slug})


def ai_discovery_url(request: HttpRequest | None) -> str:
    return site_url(request) + reverse("ai-discovery")


def owner_verified(startup: Startup) -> bool:
    """Whether the startup's owner account is verified (the AI surface's `verified`)."""
    return startup.owner is not None and startup.owner.is_verified


def revenue_source(startup: Startup) -> str:
    """Where the headline figures come from: the provider, the founder, or public sources."""
    verification = verification_of(startup)
    if verification is not None:
        return verification.provider
    return SELF_REPORTED if startup.owner_id is not None else PUBLIC_SOURCES


class AiRevenueSerializer(serializers.Serializer):
    mrr = _whole(null=True)
    arr = _whole(null=True)
    currency = _text()
    verified = serializers.BooleanField()
    source = _text(
        help_text=f"The payment provider (`demo` for the demo dataset), `{SELF_REPORTED}` or "
        f"`{PUBLIC_SOURCES}` (unclaimed)."
    )
    growth_30d = serializers.FloatField(
        allow_null=True,
        help_text="MRR change against the daily snapshot 30 days earlier, as a ratio; null "
        "without a snapshot that old.",
    )
    synced_at = _timestamp(
        null=True, help_text="Last successful sync from the provider; null when not verified."
    )
    status = serializers.ChoiceField(
        choices=STATUSES,
        allow_null=True,
        help_text="Freshness of verified figures: ok, stale (older than "
        "VERIFICATION_STALE_HOURS), key_revoked or error; null when not verified.",
    )


def ai_revenue(startup: Startup) -> dict:
    """The AI surfaces' revenue: headline figures, their source and freshness."""
    return {
        **headline_revenue(startup),
        "source": revenue_source(startup),
        "synced_at": iso_timestamp(last_synced_at(verification_of(startup))),
        "status": verification_status(startup),
    }


class AiDiscoveryEntrySerializer(serializers.Serializer):
    """One entry of the AI discovery index."""

    name = _text()
    slug = _text()
    description = _text(null=True)
    category = _text(null=True)
    website = _text(null=True)
    profile_url = _text()
    api_url = _text(help_text="Address of the AI profile.")
    verified = serializers.BooleanField(help_text="The owner account is verified.")

    def to_representation(self, startup: Startup) -> dict:
        request = self.context.get("request")
        return {
            "name": startup.name,
            "slug": startup.slug,
            "description": startup.description,
            "category": startup.category,
            "website": startup.website,
            "profile_url": profile_url(startup, request),
            "api_url": ai_api_url(startup, request),
            "verified": owner_verified(startup),
        }


class AiMatchSerializer(AiDiscoveryEntrySerializer):
    """A compact MCP search match: the discovery entry plus industry and headline revenue."""

    industry = _text(null=True)
    revenue = AiRevenueSerializer()

    def to_representation(self, startup: Startup) -> dict:
        return {
            **super().to_representation(startup),
            "industry": startup.industry,
            "revenue": ai_revenue(startup),
        }


def _categories(startup: Startup) -> list[str]:
    """The primary category first, then the extra ones, without duplicates or blanks."""
    seen: dict[str, None] = {}
    for category in [startup.category, *(startup.categories or [])]:
        if isinstance(category, str) and category.strip():
            seen.setdefault(category.strip(), None)
    return list(seen)


class AiFounderSerializer(serializers.Serializer):
    name = _text()
    title = _text(null=True)
    url = _text(null=True)


class AiProfileSerializer(serializers.Serializer):
    """The schema.org-style AI profile of one AI-enabled startup."""

    name = _text()
    slug = _text()
    type = serializers.ChoiceField(choices=[AI_PROFILE_TYPE], help_text="schema.org type.")
    description = _text(null=True)
    website = _text(null=True)
    industry = _text(null=True)
    categories = serializers.ListField(child=_text())
    founders = AiFounderSerializer(many=True)
    founded_year = _whole(null=True)
    technologies = serializers.ListField(child=_text())
    verified = serializers.BooleanField()
    verification_status = serializers.ChoiceField(choices=[OWNER_VERIFIED, UNVERIFIED])
    revenue = AiRevenueSerializer()
    updated_at = _timestamp()
    source = _text(help_text="Name of the publishing service.")
    service_profile = _text(help_text="Public profile page.")
    api_url = _text(help_text="Address of this profile.")
    same_as = serializers.ListField(child=_text(), help_text="Links for entity matching.")
    discovery = _text(help_text="Address of the discovery index.")

    def to_representation(self, startup: Startup) -> dict:
        request = self.context.get("request")
        socials = [social.url for social in startup.socials.all()]
        is_owner_verified = owner_verified(startup)
        return {
            "name": startup.name,
            "slug": startup.slug,
            "type": AI_PROFILE_TYPE,
            "description": startup.description,
            "website": startup.website,
            "industry": startup.industry,
            "categories": _categories(startup),
            "founders": [
                {
                    "name": founder.name,
                    "title": founder.title,
                    "url": founder.twitter or founder.linkedin or None,
                }
                for founder in startup.founders.all()
            ],
            "founded_year": startup.founded,
            "technologies": list(startup.technologies or []),
            "verified": is_owner_verified,
            "verification_status": OWNER_VERIFIED if is_owner_verified else UNVERIFIED,
            "revenue": ai_revenue(startup),
            "updated_at": iso_timestamp(startup.updated_at),
            "source": settings.SERVICE_NAME,
            "service_profile": profile_url(startup, request),
            "api_url": ai_api_url(startup, request),
            "same_as": list(dict.fromkeys(url for url in [startup.website, *socials] if url)),
            "discovery": ai_discovery_url(request),
        }


class AiDiscoverySerializer(serializers.Serializer):
    """The AI discovery index over a list of AI-enabled startups."""

    source = _text(help_text="Name of the publishing service.")
    site = _text()
    updated_at = _timestamp(null=True, help_text="Null when the index is empty.")
    count = _whole(help_text="Number of entries in `startups`.")
    startups = AiDiscoveryEntrySerializer(many=True)

    def to_representation(self, startups: list[Startup]) -> dict:
        request = self.context.get("request")
        updated = max((startup.updated_at for startup in startups), default=None)
        return {
            "source": settings.SERVICE_NAME,
            "site": site_url(request),
            "updated_at": iso_timestamp(updated),
            "count": len(startups),
            "startups": AiDiscoveryEntrySerializer(startups, many=True, context=self.context).data,
        }
