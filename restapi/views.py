import zlib
from collections.abc import Callable, Iterable, Iterator

import orjson
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import cache_control
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import NotFound, ProRequired
from core.openapi import (
    CONTENT_ENCODING,
    INVALID_CURSOR,
    LINK,
    PRO_REQUIRED,
    REST_RESPONSE_HEADERS,
    REST_TAG,
    error_responses,
    rest_operation,
)
from core.renderers import camelize
from core.shapes import declared
from quota.callers import request_caller
from quota.plans import PRO
from quota.views import RestView
from restapi.fieldsets import parse_fields, sparse
from restapi.paging import page_request, paginated_response
from restapi.params import (
    HistoryFilterSerializer,
    StartupExportFilterSerializer,
    StartupFilterSerializer,
)
from restapi.profiles import startup_profile_json
from restapi.serializers import (
    AttestationEnvelopeSerializer,
    CategoryCountSerializer,
    CategoryListSerializer,
    StartupEnvelopeSerializer,
)
from restapi.shapes import HistoryPage, StartupPage, history_page
from startups.attestation import attestation_payload, attestation_sign, jwks
from startups.freshness import METHODOLOGY_VERSION, METHODOLOGY_VERSIONS
from startups.history import startup_history
from startups.methodology import methodology_html
from startups.pagecache import startup_page
from startups.selectors import category_counts, startup_export, startup_get
from startups.serializers import (
    StartupDetailSerializer,
    StartupListSerializer,
    shape_list_rows,
    shape_snapshots,
    verification_of,
)
from transparency.attestations import attestation_log

# The OpenAPI examples: one startup, as the list and the detail show it.
_EXAMPLE_IDENTITY = {
    "name": "Acme Analytics",
    "slug": "acme-analytics",
    "icon": None,
    "description": "Product analytics for small teams",
    "website": "https://acme.example",
    "category": "Analytics",
}
_LIST_EXAMPLE = {
    "data": [
        {
            **_EXAMPLE_IDENTITY,
            "founder_name": "Ada Example",
            "revenue": {
                "mrr": 4200,
                "arr": 50400,
                "verified": True,
                "source": "verified",
                "last_synced_at": "2026-11-01T00:00:00.000Z",
                "growth_30d": 0.12,
            },
            "on_sale": False,
            "rank": 1,
            "updated_at": "2026-11-20T09:30:00.000Z",
            "profile_url": "https://openstartup.example/startups/acme-analytics",
        }
    ],
    "meta": {
        "total": 1,
        "page": 1,
        "limit": 10,
        "has_more": False,
        "next_cursor": None,
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
        **_EXAMPLE_IDENTITY,
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
            "source": "verified",
            "last_synced_at": "2026-11-01T00:00:00.000Z",
            "growth_30d": 0.12,
        },
        "verification": {
            "status": "ok",
            "last_synced_at": "2026-11-01T00:00:00.000Z",
            "methodology": "https://openstartup.example/docs/methodology/v2",
            "methodology_version": "v2",
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
            "credential": "restricted_read",
            "provider_reported": None,
        },
        "provider_account": {"name": "Acme Analytics GmbH", "domain": "acme.example"},
        "on_sale": False,
        "asking_price": None,
        "profile_url": "https://openstartup.example/startups/acme-analytics",
    }
}


_SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The startup's slug.")


class StartupListView(RestView):
    @rest_operation(
        operation_id="listStartups",
        summary="List startups",
        description="Paginated list of the full dataset. Invalid query parameters are never "
        "errors; what was ignored is named in `meta.warnings`. Each startup returned counts as "
        "one record against the Free monthly allowance (a HEAD request spends nothing). Page "
        "by `page` until `meta.hasMore` is false, or by `cursor` (stable while data changes): "
        "send `meta.nextCursor` back until it is null. `Link` gives the next, previous and "
        "first pages.",
        parameters=(StartupFilterSerializer,),
        headers=(LINK,),
        ok=declared(StartupPage),
        errors=(400, INVALID_CURSOR, 401, 403, 405, 429, 500),
        examples=[OpenApiExample("A page", value=_LIST_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        params = StartupFilterSerializer(data=request.query_params)
        params.is_valid()
        paging = page_request(
            requested=params.requested_limit(),
            page=params.page_number(),
            after=params.after(),
            plan=request_caller(request).plan,
        )
        filters = params.filters()
        selected, field_warnings = parse_fields(
            params.validated_data.get("fields"), StartupListSerializer
        )
        with self.reserve(request, wanted=paging.size) as reservation:
            result = startup_page(
                filters=filters, offset=paging.offset, limit=reservation.granted, after=paging.after
            )
            reservation.use(len(result.startups))
        data = shape_list_rows(result.startups, request)
        if selected is not None:
            data = [sparse(item, selected) for item in camelize(data)]
        return paginated_response(
            request,
            data,
            result=result,
            paging=paging,
            reservation=reservation,
            sort=filters.sort,
            warnings=params.warnings() + field_warnings,
        )


class StartupDetailView(RestView):
    @rest_operation(
        operation_id="getStartup",
        summary="One startup",
        description="The full profile of one startup; `verification` is filled only when the "
        "founder connected a payment provider. A successful call counts as one record against "
        "the Free monthly allowance; a 404 or a HEAD request costs nothing.",
        parameters=(
            _SLUG,
            OpenApiParameter(
                "fields",
                str,
                description="Sparse fieldset: comma-separated fields to return, nested ones "
                "dotted (`name,slug,revenue.mrr`); unknown names are ignored.",
            ),
        ),
        ok=StartupEnvelopeSerializer,
        errors=(400, 401, 403, 404, 405, 429, 500),
        examples=[OpenApiExample("A verified startup", value=_DETAIL_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, slug: str) -> Response:
        selected, _ = parse_fields(request.query_params.get("fields"), StartupDetailSerializer)
        profile = startup_profile_json(slug=slug, request=request)
        if profile is None:  # checked first: a 404 spends nothing
            raise NotFound(f"No startup with slug '{slug}'")
        with self.reserve(request, wanted=1) as reservation:
            reservation.use(1)
        if selected is not None:
            return Response({"data": sparse(orjson.loads(profile), selected)})
        # The profile is already rendered JSON (camelCase): embedded as is.
        return Response({"data": orjson.Fragment(profile)})


class StartupHistoryView(RestView):
    @rest_operation(
        operation_id="getStartupHistory",
        summary="Daily history of verified figures",
        description="One snapshot per UTC day on which a sync succeeded (the last sync of the "
        "day wins; earlier days are never rewritten), oldest first, between `from` and `to` "
        "inclusive. Self-reported startups have none. One call counts as one record against "
        "the Free monthly allowance; a 404 (as for the detail) costs nothing.",
        parameters=(_SLUG, HistoryFilterSerializer),
        ok=declared(HistoryPage),
        errors=(400, 401, 404, 405, 429, 500),
    )
    def get(self, request: Request, slug: str) -> Response:
        params = HistoryFilterSerializer(data=request.query_params)
        params.is_valid()  # lenient: a date it cannot read is no bound
        start, end = params.bounds()
        found = startup_history(slug=slug, start=start, end=end)
        if found is None:
            raise NotFound(f"No startup with slug '{slug}'")
        stored, days = found
        with self.reserve(request, wanted=1) as reservation:
            reservation.use(1)
        data = shape_snapshots(days)
        return Response(
            history_page(
                data,
                slug=stored,
                start=start.isoformat() if start else None,
                end=end.isoformat() if end else None,
                status=reservation.status,
            )
        )


class StartupAttestationView(RestView):
    @rest_operation(
        operation_id="getStartupAttestation",
        summary="Signed attestation of verified figures",
        description="A compact JWS (EdDSA, Ed25519) over the startup's verified figures, "
        "verifiable offline against `/.well-known/jwks.json`, with its leaf in the transparency "
        "log (`leafIndex`, `logEntry`) and the proof of that leaf's inclusion in a signed tree "
        "head (`treeHead`, `inclusionProof`). Only for startups with verified "
        "figures (404 `not_found` otherwise, costing nothing); one record against the Free "
        "monthly allowance.",
        parameters=(_SLUG,),
        ok=AttestationEnvelopeSerializer,
        errors=(400, 401, 404, 405, 429, 500),
    )
    def get(self, request: Request, slug: str) -> Response:
        startup = startup_get(slug=slug)
        if startup is None or verification_of(startup) is None:
            raise NotFound(f"No verified startup with slug '{slug}'")
        with self.reserve(request, wanted=1) as reservation:
            payload = attestation_payload(startup, request=request, now=timezone.now())
            payload, logged = attestation_log(payload)
            token, kid = attestation_sign(payload)
            reservation.use(1)
        return Response({"data": {"jws": token, "key_id": kid, **logged}})


@cache_control(public=True, max_age=300)
def jwks_view(request: HttpRequest) -> HttpResponse:
    """The attestation public keys (JWK Set); no key needed."""
    return JsonResponse(jwks(), content_type="application/jwk-set+json")


def methodology_page(request: HttpRequest, version: str) -> HttpResponse:
    """A published methodology version rendered to HTML; every version stays served."""
    if version not in METHODOLOGY_VERSIONS:
        raise Http404("No such methodology version")
    return render(
        request,
        "docs/methodology.html",
        {"body": methodology_html(version), "version": version, "current": METHODOLOGY_VERSION},
    )


class CategoryListView(RestView):
    @rest_operation(
        operation_id="listCategories",
        summary="Categories with counts",
        description="Every primary category of the published startups with how many startups "
        "have it, largest first. Free of charge: spends none of the monthly allowance.",
        ok=CategoryListSerializer,
        errors=(400, 401, 405, 500),
        metered=False,
    )
    def get(self, request: Request) -> Response:
        request_caller(request)  # a wrong key is still a 401
        return Response({"data": CategoryCountSerializer(category_counts(), many=True).data})


NDJSON = "application/x-ndjson"
# Lines are sent in batches of about this many bytes (compressed separately when gzipped).
_EXPORT_BATCH_BYTES = 64 * 1024


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether Accept-Encoding allows gzip (by name or `*`, with a q-value above 0)."""
    for part in accept_encoding.split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().lower()
            if not q.startswith("q=") or q[2:].strip() not in ("0", "0.0", "0.00", "0.000"):
                return True
    return False


def _ndjson(items: Iterable[dict], trailer: Callable[[], dict]) -> Iterator[bytes]:
    """One JSON document per line, batched; the trailer line last."""
    batch = bytearray()
    for item in items:
        batch += orjson.dumps(item) + b"\n"
        if len(batch) >= _EXPORT_BATCH_BYTES:
            yield bytes(batch)
            batch.clear()
    yield bytes(batch) + orjson.dumps(trailer()) + b"\n"


def _gzipped(chunks: Iterable[bytes]) -> Iterator[bytes]:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip container
    for chunk in chunks:
        # A sync flush per batch: the client can decompress what it has received so far.
        yield compressor.compress(chunk) + compressor.flush(zlib.Z_SYNC_FLUSH)
    yield compressor.flush()


class StartupExportView(RestView):
    @extend_schema(
        operation_id="exportStartups",
        summary="Export startups (NDJSON, Pro)",
        description="The whole filtered dataset (the list's filters, `sort` and `fields`) as "
        "NDJSON: one list item per line (with `rank` and `updatedAt`), then a last line "
        '`{"meta": {"count": N}}` (plus `warnings` when parameters were ignored); a stream '
        "without that line was cut short. Streamed without Content-Length; gzip-compressed "
        "when Accept-Encoding allows it. Pro plan only (Free: 403 `pro_required`); spends no "
        "allowance.",
        tags=[REST_TAG],
        parameters=[
            StartupExportFilterSerializer,
            *REST_RESPONSE_HEADERS,
            CONTENT_ENCODING,
        ],
        responses={
            (200, NDJSON): OpenApiResponse(
                OpenApiTypes.STR,
                description="NDJSON lines: list items, then the count line.",
                examples=[
                    OpenApiExample(
                        "Two startups",
                        value='{"name":"Acme Analytics","slug":"acme-analytics",...}\n'
                        '{"name":"Beta","slug":"beta",...}\n{"meta":{"count":2}}\n',
                        response_only=True,
                    )
                ],
            ),
            **error_responses(400, 401, 403, PRO_REQUIRED, 405, 500),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        params = StartupExportFilterSerializer(data=request.query_params)
        params.is_valid()
        if request_caller(request).plan.name != PRO.name:
            raise ProRequired(
                "Exports are part of the Pro plan. Send the key of an account with an active "
                "Pro subscription, or page through /api/v1/startups (cursor paging) on Free."
            )
        filters = params.filters()
        selected, field_warnings = parse_fields(
            params.validated_data.get("fields"), StartupListSerializer
        )
        warnings = params.warnings() + field_warnings
        served = 0

        def items() -> Iterator[dict]:
            nonlocal served
            for startup in startup_export(filters=filters):
                served += 1
                item = StartupListSerializer(startup, context={"request": request}).data
                yield sparse(camelize(item), selected)

        def trailer() -> dict:
            meta = {"count": served}
            if warnings:
                meta["warnings"] = warnings
            return {"meta": meta}

        body = iter(()) if request.method == "HEAD" else _ndjson(items(), trailer)
        response = StreamingHttpResponse(body, content_type=NDJSON)
        response["Vary"] = "Accept-Encoding"
        if accepts_gzip(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            response.streaming_content = _gzipped(body)
            response["Content-Encoding"] = "gzip"
        response["Content-Disposition"] = 'attachment; filename="startups.ndjson"'
        return response
