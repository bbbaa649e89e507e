"""/api/ai (discovery index and profiles) and /llms.txt: snake_case, shared selectors.

Authentication: these views take DRF's DEFAULT_AUTHENTICATION_CLASSES, so once the API-key
class is in the settings a wrong key gets 401 before anything is served. They never meter the
Free monthly allowance (the curated AI set is free to read).
"""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aisurface.cache import cached_response
from aisurface.llms import llms_txt
from openstartup.errors import NotFound
from openstartup.openapi import (
    AI_REQUEST_HEADERS,
    AI_RESPONSE_HEADERS,
    AI_TAG,
    error_responses,
)
from startups.renderers import JSONRenderer
from startups.selectors import ai_startup_get, ai_startup_list
from startups.serializers import (
    AiDiscoveryFilterSerializer,
    AiDiscoverySerializer,
    AiProfileSerializer,
)

_NOT_MODIFIED = OpenApiResponse(description="Not modified: the `If-None-Match` ETag is current.")


class AiDiscoveryView(APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="aiDiscovery",
        summary="AI discovery index",
        description="The startups with a live AI visibility add-on (a curated, founder-approved "
        "set). Cached for up to 5 minutes; does not spend the monthly allowance. Invalid filter "
        "values are ignored, never errors.",
        tags=[AI_TAG],
        parameters=[AiDiscoveryFilterSerializer, *AI_REQUEST_HEADERS, *AI_RESPONSE_HEADERS],
        responses={
            200: AiDiscoverySerializer,
            304: _NOT_MODIFIED,
            **error_responses(400, 401, 405, 500),
        },
    )
    def get(self, request: Request) -> Response:
        params = AiDiscoveryFilterSerializer(data=request.query_params)
        params.is_valid()
        filters = params.filters()

        def build() -> dict:
            startups = ai_startup_list(**filters)
            return AiDiscoverySerializer(startups, context={"request": request}).data

        return cached_response(request, parts=filters, build=build)


class AiProfileView(APIView):
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
        ],
        responses={
            200: AiProfileSerializer,
            304: _NOT_MODIFIED,
            **error_responses(400, 401, 404, 405, 500),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        def build() -> dict:
            startup = ai_startup_get(slug=slug)
            if startup is None:
                raise NotFound(f"No AI-enabled startup with slug '{slug}'")
            return AiProfileSerializer(startup, context={"request": request}).data

        return cached_response(request, parts={"slug": slug}, build=build)


@require_safe
def llms_txt_view(request: HttpRequest) -> HttpResponse:
    """The llms.txt overview, generated from the URL configuration and settings."""
    return HttpResponse(llms_txt(request), content_type="text/plain; charset=utf-8")
