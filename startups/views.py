import orjson
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import cache_control
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
from startups.attestation import attestation_payload, attestation_sign, jwks
from startups.freshness import METHODOLOGY_VERSION
from startups.history import revenue_history
from startups.methodology import methodology_html
from startups.renderers import CamelCaseJSONRenderer
from startups.selectors import startup_get
from startups.serializers import (
    AttestationEnvelopeSerializer,
    HistoryFilterSerializer,
    HistoryPageSerializer,
    SnapshotSerializer,
    StartupDetailSerializer,
    StartupEnvelopeSerializer,
    StartupFilterSerializer,
    StartupListSerializer,
    StartupPageSerializer,
    profile_url,
    verification_of,
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
            "revenue": {
                "mrr": 4200,
                "arr": 50400,
                "verified": True,
                "last_synced_at": "2026-11-01T00:00:00.000Z",
                "growth_30d": 0.12,
            },
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
        "revenue": {
            "mrr": 4200,
            "arr": 50400,
            "currency": "USD",
            "verified": True,
            "last_synced_at": "2026-11-01T00:00:00.000Z",
            "growth_30d": 0.12,
        },
        "verification": {
            "status": "ok",
            "last_synced_at": "2026-11-01T00:00:00.000Z",
            "methodology": "https://openstartup.example/docs/methodology/v1",
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


_SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The startup's slug.")


class StartupHistoryView(QuotaHeadersMixin, APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    @extend_schema(
        operation_id="getStartupHistory",
        summary="Daily history of verified figures",
        description="One snapshot per UTC day on which a sync succeeded (the last sync of the "
        "day wins; earlier days are never rewritten), oldest first, between `from` and `to` "
        "inclusive. Self-reported startups have none. One call counts as one record against "
        "the Free monthly allowance; a 404 (as for the detail) costs nothing.",
        tags=[REST_TAG],
        parameters=[_SLUG, HistoryFilterSerializer, *REST_RESPONSE_HEADERS, RETRY_AFTER],
        responses={200: HistoryPageSerializer, **error_responses(400, 401, 404, 405, 429, 500)},
    )
    def get(self, request: Request, slug: str) -> Response:
        startup = startup_get(slug=slug)
        if startup is None:
            raise NotFound(f"No startup with slug '{slug}'")
        params = HistoryFilterSerializer(data=request.query_params)
        params.is_valid()
        start, end = params.bounds()
        with quota_reservation(caller=request_caller(request), wanted=1) as reservation:
            snapshots = list(revenue_history(startup=startup, start=start, end=end))
            reservation.use(1)
        meta = {
            "slug": startup.slug,
            "count": len(snapshots),
            "from": start.isoformat() if start else None,
            "to": end.isoformat() if end else None,
            **quota_meta(request_status(request, refresh=True)),
        }
        return Response({"data": SnapshotSerializer(snapshots, many=True).data, "meta": meta})


class StartupAttestationView(QuotaHeadersMixin, APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    @extend_schema(
        operation_id="getStartupAttestation",
        summary="Signed attestation of verified figures",
        description="A compact JWS (EdDSA, Ed25519) over the startup's verified figures, "
        "verifiable offline against `/.well-known/jwks.json`. Only for startups with verified "
        "figures (404 `not_found` otherwise, costing nothing); one record against the Free "
        "monthly allowance.",
        tags=[REST_TAG],
        parameters=[_SLUG, *REST_RESPONSE_HEADERS, RETRY_AFTER],
        responses={
            200: AttestationEnvelopeSerializer,
            **error_responses(400, 401, 404, 405, 429, 500),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        startup = startup_get(slug=slug)
        if startup is None or verification_of(startup) is None:
            raise NotFound(f"No verified startup with slug '{slug}'")
        with quota_reservation(caller=request_caller(request), wanted=1) as reservation:
            payload = attestation_payload(startup, request=request, now=timezone.now())
            token, kid = attestation_sign(payload)
            reservation.use(1)
        return Response({"data": {"jws": token, "key_id": kid}})


@cache_control(public=True, max_age=300)
def jwks_view(request: HttpRequest) -> HttpResponse:
    """The attestation public keys (JWK Set); no key needed."""
    return JsonResponse(jwks(), content_type="application/jwk-set+json")


def methodology_page(request: HttpRequest, version: str) -> HttpResponse:
    """The published methodology (docs/methodology.md rendered to HTML); v1 is the only one."""
    if version != METHODOLOGY_VERSION:
        raise Http404("No such methodology version")
    return render(
        request,
        "docs/methodology.html",
        {"body": methodology_html(), "version": version},
    )


def profile_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The public profile page that profileUrl points to."""
    startup = startup_get(slug=slug)
    if startup is None:
        raise Http404("No such startup")
    data = StartupDetailSerializer(startup, context={"request": request}).data
    return render(
        request,
        "startups/profile.html",
        {"startup": data, "profile_url": profile_url(startup, request)},
    )
