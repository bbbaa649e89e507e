"""/api/ai (discovery index and profiles): snake_case, shared selectors.

Authentication: these views take DRF's DEFAULT_AUTHENTICATION_CLASSES, so once the API-key
class is in the settings a wrong key gets 401 before anything is served. They never meter the
Free monthly allowance (the curated AI set is free to read).
"""

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aisurface.cache import cached_response, involves
from aisurface.serializers import (
    AiDiscoveryFilterSerializer,
    AiDiscoverySerializer,
    AiProfileSerializer,
)
from core import readcache
from core.cycles import ReleasesCycles
from core.errors import NotFound
from core.openapi import (
    AI_REQUEST_HEADERS,
    AI_RESPONSE_HEADERS,
    AI_TAG,
    FAIR_USE_HEADERS,
    RATE_LIMITED,
    RETRY_AFTER,
    DocumentedOptions,
    error_responses,
)
from core.renderers import JSONRenderer
from startups.aiselectors import ai_startup_get, ai_startup_list

_ENTRY_EXAMPLE = {
    "name": "Acme Analytics",
    "slug": "acme-analytics",
    "description": "Product analytics for small teams",
    "category": "Analytics",
    "website": "https://acme.example",
    "profile_url": "https://openstartup.example/startups/acme-analytics",
    "api_url": "https://openstartup.example/api/ai/startups/acme-analytics",
    "verified": True,
}
_DISCOVERY_EXAMPLE = {
    "source": "OpenStartup",
    "site": "https://openstartup.example",
    "updated_at": "2026-11-01T12:00:00.000Z",
    "count": 1,
    "startups": [_ENTRY_EXAMPLE],
}
_PROFILE_EXAMPLE = {
    "name": "Acme Analytics",
    "slug": "acme-analytics",
    "type": "Organization",
    "description": "Product analytics for small teams",
    "website": "https://acme.example",
    "industry": "Software",
    "categories": ["Analytics", "SaaS"],
    "founders": [{"name": "Ada Example", "title": "Founder", "url": "https://x.com/ada"}],
    "founded_year": 2021,
    "technologies": ["Django", "PostgreSQL"],
    "verified": True,
    "verification_status": "owner_verified",
    "revenue": {
        "mrr": 4200,
        "arr": 50400,
        "currency": "USD",
        "verified": True,
        "growth_30d": 0.12,
        "source": "stripe",
        "synced_at": "2026-11-01T11:00:00.000Z",
        "status": "ok",
        "methodology_version": "v2",
    },
    "updated_at": "2026-11-01T12:00:00.000Z",
    "source": "OpenStartup",
    "service_profile": "https://openstartup.example/startups/acme-analytics",
    "api_url": "https://openstartup.example/api/ai/startups/acme-analytics",
    "same_as": ["https://acme.example", "https://x.com/acme"],
    "discovery": "https://openstartup.example/api/ai/discovery",
}
_DISCOVERY_PARAMETERS = tuple(AiDiscoveryFilterSerializer().fields)
_NOT_MODIFIED = OpenApiResponse(description="Not modified: the `If-None-Match` ETag is current.")


class AiDiscoveryView(ReleasesCycles, DocumentedOptions, APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="aiDiscovery",
        summary="AI discovery index",
        description="The startups with a live AI visibility add-on (a curated, founder-approved "
        "set). Cached for up to 5 minutes; does not spend the monthly allowance. Invalid filter "
        "values are ignored, never errors.",
        tags=[AI_TAG],
        parameters=[
            AiDiscoveryFilterSerializer,
            *AI_REQUEST_HEADERS,
            *AI_RESPONSE_HEADERS,
            RETRY_AFTER,
            *FAIR_USE_HEADERS,
        ],
        responses={
            200: AiDiscoverySerializer,
            304: _NOT_MODIFIED,
            **error_responses(400, 401, 403, 405, RATE_LIMITED, 500),
        },
        examples=[OpenApiExample("An index", value=_DISCOVERY_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        # The answer is named by the raw values of its parameters; they are validated only
        # when it is built (DRF's validation would add about a sixth to a cached hit).
        query = request.query_params
        raw = {name: query.get(name) for name in _DISCOVERY_PARAMETERS}

        def build() -> dict:
            params = AiDiscoveryFilterSerializer(data=query)
            params.is_valid()
            filters = params.filters()
            startups = ai_startup_list(filters=filters, db=readcache.fill_db())
            involves(startups, filters=filters)
            return AiDiscoverySerializer(startups, context={"request": request}).data

        return cached_response(request, parts=raw, build=build)


class AiProfileView(ReleasesCycles, DocumentedOptions, APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="aiProfile",
        summary="AI profile",
        description="schema.org-style profile of one AI-enabled startup. 404 unless its AI "
        "visibility add-on is live. Cached for up to 5 minutes; does not spend the allowance.",
        tags=[AI_TAG],
        parameters=[
            OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The startup's slug."),
            *AI_REQUEST_HEADERS,
            *AI_RESPONSE_HEADERS,
            RETRY_AFTER,
            *FAIR_USE_HEADERS,
        ],
        responses={
            200: AiProfileSerializer,
            304: _NOT_MODIFIED,
            **error_responses(400, 401, 403, 404, 405, RATE_LIMITED, 500),
        },
        examples=[OpenApiExample("A profile", value=_PROFILE_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, slug: str) -> Response:
        def build() -> dict:
            startup = ai_startup_get(slug=slug, db=readcache.fill_db())
            if startup is None:
                raise NotFound(f"No AI-enabled startup with slug '{slug}'")
            involves([startup])
            return AiProfileSerializer(startup, context={"request": request}).data

        return cached_response(request, parts={"slug": slug}, build=build)
