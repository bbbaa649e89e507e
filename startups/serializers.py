"""snake_case shapes of the dataset; REST camelCases them, the AI surface uses them as is.

Every documented key is always present: unknown values are None, never omitted.
"""

import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
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


class AiDiscoveryFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/ai/discovery. Invalid values are ignored, never errors."""

    category = LenientText(required=False)
    industry = LenientText(required=False)
    verified = LenientBoolean(required=False)

    def filters(self) -> dict[str, Any]:
        data = self.validated_data
        return {key: data.get(key) for key in ("category", "industry", "verified")}


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


class AiDiscoveryEntrySerializer(serializers.Serializer):
    """One entry of the AI discovery index."""

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

    def to_representation(self, startup: Startup) -> dict:
        return {
            **super().to_representation(startup),
            "industry": startup.industry,
            "revenue": {
                "mrr": startup.mrr,
                "arr": startup.arr,
                "currency": startup.currency,
                "verified": verification_of(startup) is not None,
            },
        }


def _categories(startup: Startup) -> list[str]:
    """The primary category first, then the extra ones, without duplicates or blanks."""
    seen: dict[str, None] = {}
    for category in [startup.category, *(startup.categories or [])]:
        if isinstance(category, str) and category.strip():
            seen.setdefault(category.strip(), None)
    return list(seen)


class AiProfileSerializer(serializers.Serializer):
    """The schema.org-style AI profile of one AI-enabled startup."""

    def to_representation(self, startup: Startup) -> dict:
        request = self.context.get("request")
        verification = verification_of(startup)
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
            "revenue": {
                "mrr": startup.mrr,
                "arr": startup.arr,
                "currency": startup.currency,
                "verified": verification is not None,
                "source": revenue_source(startup),
            },
            "updated_at": iso_timestamp(startup.updated_at),
            "source": settings.SERVICE_NAME,
            "service_profile": profile_url(startup, request),
            "api_url": ai_api_url(startup, request),
            "same_as": list(dict.fromkeys(url for url in [startup.website, *socials] if url)),
            "discovery": ai_discovery_url(request),
        }


class AiDiscoverySerializer(serializers.Serializer):
    """The AI discovery index over a list of AI-enabled startups."""

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
