"""snake_case shapes of the dataset; REST camelCases them, the AI surface uses them as is.

Every documented key is always present: unknown values are None, never omitted.
"""

import math
from typing import Any

from rest_framework import serializers

from openstartup.formats import iso_month, iso_timestamp, site_url
from startups.models import Startup, Verification
from startups.selectors import DEFAULT_SORT, SORT_ORDERS, StartupFilters

# Bounds that keep any number a client sends inside what both databases can compare.
_BIGINT_MAX = 2**63 - 1
MAX_PAGE = 1_000_000
MAX_TEXT = 200


class LenientField(serializers.Field):
    """A query parameter that never fails validation: garbage becomes `None` (the default)."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return self.parse(str(data).strip())
        except (ValueError, OverflowError):
            return None

    def parse(self, raw: str) -> Any:
        raise NotImplementedError


class LenientInteger(LenientField):
    def parse(self, raw: str) -> int | None:
        return int(raw) if raw else None


class LenientMoney(LenientField):
    """A whole-dollar bound; decimals are accepted, NaN and infinities ignored."""

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
    def parse(self, raw: str) -> bool | None:
        return {"true": True, "false": False}.get(raw.lower())


class LenientChoice(LenientField):
    def __init__(self, *, choices: list[str], **kwargs: Any):
        self.choices = choices
        super().__init__(**kwargs)

    def parse(self, raw: str) -> str | None:
        return raw if raw in self.choices else None


class LenientText(LenientField):
    def parse(self, raw: str) -> str | None:
        # NUL cannot be stored or compared by PostgreSQL; it never matches anything anyway.
        text = raw.replace("\x00", "")[:MAX_TEXT]
        return text or None


class StartupFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/v1/startups. Invalid values are ignored, never errors."""

    page = LenientInteger(required=False)
    limit = LenientInteger(required=False)
    sort = LenientChoice(choices=list(SORT_ORDERS), required=False)
    q = LenientText(required=False)
    category = LenientText(required=False)
    onSale = LenientBoolean(required=False, source="on_sale")  # noqa: N815 - the wire name
    minMrr = LenientMoney(rounding="up", required=False, source="min_mrr")  # noqa: N815
    maxMrr = LenientMoney(rounding="down", required=False, source="max_mrr")  # noqa: N815

    def filters(self) -> StartupFilters:
        data = self.validated_data
        return StartupFilters(
            q=data.get("q"),
            category=data.get("category"),
            on_sale=data.get("on_sale"),
            min_mrr=data.get("min_mrr"),
            max_mrr=data.get("max_mrr"),
            sort=data.get("sort") or DEFAULT_SORT,
        )

    def page_number(self) -> int:
        page = self.validated_data.get("page") or 1
        return max(1, min(page, MAX_PAGE))

    def requested_limit(self) -> int | None:
        return self.validated_data.get("limit")


def profile_url(startup: Startup, request) -> str:
    return f"{site_url(request)}/startups/{startup.slug}"


def verification_of(startup: Startup) -> Verification | None:
    """The startup's verification record, or None for self-reported figures."""
    return getattr(startup, "verification", None)


class StartupListSerializer(serializers.Serializer):
    def to_representation(self, startup: Startup) -> dict:
        return {
            "name": startup.name,
            "slug": startup.slug,
            "icon": startup.icon,
            "description": startup.description,
            "website": startup.website,
            "category": startup.category,
            "founder_name": startup.founder_name,
            "revenue": {"mrr": startup.mrr, "arr": startup.arr},
            "on_sale": startup.on_sale,
            "rank": getattr(startup, "rank", None),
        }


class VerificationSerializer(serializers.Serializer):
    def to_representation(self, verification: Verification) -> dict:
        monthly = list(verification.monthly.all())
        return {
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


class StartupDetailSerializer(serializers.Serializer):
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
                "mrr": startup.mrr,
                "arr": startup.arr,
                "currency": startup.currency,
                "verified": verification is not None,
            },
            "verification": (
                VerificationSerializer(verification).data if verification is not None else None
            ),
            "on_sale": startup.on_sale,
            "asking_price": startup.asking_price,
            "profile_url": profile_url(startup, self.context.get("request")),
        }
