import orjson
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from openstartup.errors import NotFound
from openstartup.formats import iso_timestamp
from openstartup.openapi import REST_RESPONSE_HEADERS, REST_TAG, RETRY_AFTER, error_responses
from openstartup.readcache import startup_page, startup_profile_json
from quota.callers import request_caller
from quota.headers import QuotaHeadersMixin, quota_meta, request_status
from quota.plans import apply_limit, remaining_notice
from quota.services import quota_reservation
from startups.renderers import CamelCaseJSONRenderer
from startups.serializers import (
    StartupEnvelopeSerializer,
    StartupFilterSerializer,
    StartupListSerializer,
    StartupPageSerializer,
)

_LIST_EXAMPLE = {
    "data": [
        {
            "name": "Acme Analytics",
            "slug": "acme-analytics",
            "icon": None,
            "description": "Product analytics for small teams",
            "website": "https://acme.example",
            "category": "Analytics",
            "founder_name": "Ada Example",
            "revenue": {"mrr": 4200, "arr": 50400},
            "on_sale": False,
            "rank": 1,
        }
    ],
    "meta": {
        "total": 1,
        "page": 1,
        "limit": 10,
        "has_more": False,
        "plan": "Free",
        "max_limit": 10,
        "quota": {
            "limit": 100,
            "used": 1,
            "remaining": 99,
            "resets_at": "2026-12-01T00:00:00.000Z",
        },
    },
}
_DETAIL_EXAMPLE = {
    "data": {
        "name": "Acme Analytics",
        "slug": "acme-analytics",
        "icon": None,
        "description": "Product analytics for small teams",
        "website": "https://acme.example",
        "category": "Analytics",
        "business_type": "B2B",
        "founded": 2021,
        "country": "Germany",
        "team_size": "2-5",
        "founders": [
            {"name": "Ada Example", "title": "Founder", "twitter": None, "linkedin": None}
        ],
        "technologies": ["Django", "PostgreSQL"],
        "socials": [{"platform": "x", "url": "https://x.com/acme"}],
        "revenue": {"mrr": 4200, "arr": 50400, "currency": "USD", "verified": True},
        "verification": {
            "provider": "stripe",
            "level": "verified",
            "verified_at": "2026-11-01T00:00:00.000Z",
            "currency": "USD",
            "mrr": 4200,
            "arr": 50400,
            "total_revenue": 61000,
            "last_30_days": 4300,
            "customers": 87,
            "history_months": 1,
            "monthly": [{"month": "2026-10", "gross": 4400, "refunds": 100, "net": 4300}],
        },
        "on_sale": False,
        "asking_price": None,
        "profile_url": "https://openstartup.example/startups/acme-analytics",
    }
}


class StartupListView(QuotaHeadersMixin, APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    @extend_schema(
        operation_id="listStartups",
        summary="List startups",
        description="Paginated list of the full dataset. Invalid query parameters are never "
        "errors. Each startup returned counts as one record against the Free monthly "
        "allowance; page by incrementing `page` until `meta.hasMore` is false.",
        tags=[REST_TAG],
        parameters=[StartupFilterSerializer, *REST_RESPONSE_HEADERS, RETRY_AFTER],
        responses={
            200: StartupPageSerializer,
            **error_responses(400, 401, 405, 429, 500),
        },
        examples=[OpenApiExample("A page", value=_LIST_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        params = StartupFilterSerializer(data=request.query_params)
        params.is_valid()
        caller = request_caller(request)
        limit = apply_limit(requested=params.requested_limit(), plan=caller.plan)
        page = params.page_number()
        # Pages keep the plan's page size so `page` means the same rows when records run low.
        with quota_reservation(caller=caller, wanted=limit.value) as reservation:
            result = startup_page(
                filters=params.filters(), offset=(page - 1) * limit.value, limit=reservation.granted
            )
            reservation.use(len(result.startups))
        status = request_status(request, refresh=True)
        meta = {
            "total": result.total,
            "page": page,
            "limit": reservation.granted,
            "has_more": page * limit.value < result.total,
            **quota_meta(status),
        }
        if reservation.granted < limit.value:
            meta["notice"] = remaining_notice(
                wanted=params.requested_limit() or limit.value,
                granted=reservation.granted,
                plan=caller.plan,
                resets_on=iso_timestamp(status.resets_at),
            )
        elif limit.notice:
            meta["notice"] = limit.notice
        data = StartupListSerializer(result.startups, many=True).data
        return Response({"data": data, "meta": meta})


class StartupDetailView(QuotaHeadersMixin, APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    @extend_schema(
        operation_id="getStartup",
        summary="One startup",
        description="The full profile of one startup; `verification` is filled only when the "
        "founder connected a payment provider. A successful call counts as one record against "
        "the Free monthly allowance; a 404 costs nothing.",
        tags=[REST_TAG],
        parameters=[
            OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The startup's slug."),
            *REST_RESPONSE_HEADERS,
            RETRY_AFTER,
        ],
        responses={
            200: StartupEnvelopeSerializer,
            **error_responses(400, 401, 404, 405, 429, 500),
        },
        examples=[OpenApiExample("A verified startup", value=_DETAIL_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, slug: str) -> Response:
        profile = startup_profile_json(slug=slug, request=request)
        if profile is None:  # checked first: a 404 spends nothing
            raise NotFound(f"No startup with slug '{slug}'")
        with quota_reservation(caller=request_caller(request), wanted=1) as reservation:
            reservation.use(1)
        # The profile is already rendered JSON (camelCase): embedded as is.
        return Response({"data": orjson.Fragment(profile)})
