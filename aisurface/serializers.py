"""The AI surface's shapes (/api/ai and MCP): snake_case, as the serializers write them.

The discovery index and the AI profile render from their declared fields (their answers are
kept as rendered bytes, see aisurface/cache.py); the MCP search matches, up to 50 per
tool call, are written by hand beside their declarations, as the REST list rows are.
"""

from datetime import datetime

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from rest_framework import serializers

from core.formats import iso_timestamp, site_url
from startups.aiselectors import AiFilters
from startups.filters import LenientBoolean, LenientQuery, LenientText
from startups.freshness import STATUSES, last_synced_at, verification_status
from startups.models import Startup
from startups.profilerow import FounderRow, founder_rows
from startups.serializers import (
    Shape,
    growth_30d,
    profile_url,
    text,
    timestamp,
    verification_of,
    whole,
)
from startups.trust import shown_founders


class AiDiscoveryFilterSerializer(LenientQuery):
    """Query parameters of GET /api/ai/discovery. Invalid values are ignored, never errors."""

    category = LenientText(
        help_text='Slug-style category word: `developer-tools` matches "Developer Tools"; also '
        "matches secondary categories.",
    )
    industry = LenientText(
        help_text="Slug-style industry word.",
    )
    verified = LenientBoolean(
        help_text="`true`: only startups whose owner account is verified; `false`: only those "
        "whose owner is not; any other value is ignored.",
    )

    def filters(self) -> AiFilters:
        data = self.validated_data
        return AiFilters(
            category=data.get("category"),
            industry=data.get("industry"),
            verified=data.get("verified"),
        )


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


# Rendered by hand, as part of every match; the profile nests the same rendering.
class AiRevenueSerializer(serializers.Serializer):
    mrr = whole(null=True)
    arr = whole(null=True)
    currency = text()
    verified = serializers.BooleanField()
    source = text(
        help_text=f"The payment provider (`demo` for the demo dataset), `{SELF_REPORTED}` or "
        f"`{PUBLIC_SOURCES}` (unclaimed)."
    )
    growth_30d = serializers.FloatField(
        allow_null=True,
        help_text="MRR change against the daily snapshot 30 days earlier, as a ratio; null "
        "without a snapshot that old.",
    )
    synced_at = timestamp(
        null=True, help_text="Last successful sync from the provider; null when not verified."
    )
    status = serializers.ChoiceField(
        choices=STATUSES,
        allow_null=True,
        help_text="Freshness of verified figures: ok, stale (older than "
        "VERIFICATION_STALE_HOURS), key_revoked or error; null when not verified.",
    )
    methodology_version = text(
        null=True,
        help_text="The methodology version (`v1`, `v2`, ...; /docs/methodology/<version>) the "
        "verified figures were computed with; null when not verified (self-reported).",
    )

    def to_representation(self, startup: Startup) -> dict:
        return ai_revenue(startup)


def ai_revenue(startup: Startup) -> dict:
    """The AI surfaces' revenue: headline figures, their source and freshness."""
    verification = verification_of(startup)
    return {
        "mrr": startup.mrr,
        "arr": startup.arr,
        "currency": startup.currency,
        "verified": verification is not None,
        "growth_30d": growth_30d(startup.mrr, startup.growth_30d),
        "source": revenue_source(startup),
        "synced_at": iso_timestamp(last_synced_at(verification)),
        "status": verification_status(startup),
        "methodology_version": None if verification is None else verification.methodology_version,
    }


class AiDiscoveryEntrySerializer(Shape):
    """One entry of the AI discovery index."""

    name = text()
    slug = text()
    description = text(null=True)
    category = text(null=True)
    website = text(null=True)
    profile_url = text()
    api_url = text(help_text="Address of the AI profile.")
    verified = serializers.BooleanField(help_text="The owner account is verified.")

    def get_profile_url(self, startup: Startup) -> str:
        return profile_url(startup.slug, self.context.get("request"))

    def get_api_url(self, startup: Startup) -> str:
        return ai_api_url(startup, self.context.get("request"))

    def get_verified(self, startup: Startup) -> bool:
        return owner_verified(startup)


class AiMatchSerializer(AiDiscoveryEntrySerializer):
    """A compact MCP search match: the discovery entry plus industry and headline revenue."""

    # Rendered by hand: an MCP search returns up to 50 matches.

    industry = text(null=True)
    revenue = AiRevenueSerializer()

    def to_representation(self, startup: Startup) -> dict:
        request = self.context.get("request")
        return {
            "name": startup.name,
            "slug": startup.slug,
            "description": startup.description,
            "category": startup.category,
            "website": startup.website,
            "profile_url": profile_url(startup.slug, request),
            "api_url": ai_api_url(startup, request),
            "verified": owner_verified(startup),
            "industry": startup.industry,
            "revenue": ai_revenue(startup),
        }


class AiFounderSerializer(Shape):
    name = text()
    title = text(null=True)
    url = text(null=True)

    def get_url(self, founder: FounderRow) -> str | None:
        return founder["twitter"] or founder["linkedin"] or None


class AiProfileSerializer(Shape):
    """The schema.org-style AI profile of one AI-enabled startup."""

    name = text()
    slug = text()
    type = serializers.ChoiceField(choices=[AI_PROFILE_TYPE], help_text="schema.org type.")
    description = text(null=True)
    website = text(null=True)
    industry = text(null=True)
    categories = serializers.ListField(child=text())
    founders = AiFounderSerializer(many=True)
    founded_year = whole(null=True, source="founded")
    technologies = serializers.ListField(child=text())
    verified = serializers.BooleanField()
    verification_status = serializers.ChoiceField(choices=[OWNER_VERIFIED, UNVERIFIED])
    revenue = AiRevenueSerializer(source="*")
    updated_at = timestamp()
    source = text(help_text="Name of the publishing service.")
    service_profile = text(help_text="Public profile page.")
    api_url = text(help_text="Address of this profile.")
    same_as = serializers.ListField(child=text(), help_text="Links for entity matching.")
    discovery = text(help_text="Address of the discovery index.")

    def get_type(self, startup: Startup) -> str:
        return AI_PROFILE_TYPE

    def get_categories(self, startup: Startup) -> list[str]:
        """The primary category first, then the extra ones, without duplicates or blanks."""
        seen: dict[str, None] = {}
        for category in [startup.category, *(startup.categories or [])]:
            if isinstance(category, str) and category.strip():
                seen.setdefault(category.strip(), None)
        return list(seen)

    def get_technologies(self, startup: Startup) -> list[str]:
        return list(startup.technologies or [])

    def get_founders(self, startup: Startup) -> list[FounderRow]:
        return shown_founders(founder_rows(startup), startup.founder_name)

    def get_verified(self, startup: Startup) -> bool:
        return owner_verified(startup)

    def get_verification_status(self, startup: Startup) -> str:
        return OWNER_VERIFIED if owner_verified(startup) else UNVERIFIED

    def get_source(self, startup: Startup) -> str:
        return settings.SERVICE_NAME

    def get_service_profile(self, startup: Startup) -> str:
        return profile_url(startup.slug, self.context.get("request"))

    def get_api_url(self, startup: Startup) -> str:
        return ai_api_url(startup, self.context.get("request"))

    def get_same_as(self, startup: Startup) -> list[str]:
        links = [startup.website, *(social.url for social in startup.socials.all())]
        return list(dict.fromkeys(url for url in links if url))

    def get_discovery(self, startup: Startup) -> str:
        return ai_discovery_url(self.context.get("request"))


class AiDiscoverySerializer(Shape):
    """The AI discovery index over a list of AI-enabled startups."""

    source = text(help_text="Name of the publishing service.")
    site = text()
    updated_at = timestamp(null=True, help_text="Null when the index is empty.")
    count = whole(help_text="Number of entries in `startups`.")
    startups = AiDiscoveryEntrySerializer(many=True, source="*")

    def get_source(self, startups: list[Startup]) -> str:
        return settings.SERVICE_NAME

    def get_site(self, startups: list[Startup]) -> str:
        return site_url(self.context.get("request"))

    def get_updated_at(self, startups: list[Startup]) -> datetime | None:
        return max((startup.updated_at for startup in startups), default=None)

    def get_count(self, startups: list[Startup]) -> int:
        return len(startups)
