from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from openstartup.errors import NotFound
from openstartup.formats import iso_timestamp
from quota.callers import request_caller
from quota.headers import QuotaHeadersMixin, quota_meta, request_status
from quota.plans import apply_limit, remaining_notice
from quota.services import quota_reservation
from startups.renderers import CamelCaseJSONRenderer
from startups.selectors import startup_get, startup_page
from startups.serializers import (
    StartupDetailSerializer,
    StartupFilterSerializer,
    StartupListSerializer,
    profile_url,
)


class StartupListView(QuotaHeadersMixin, APIView):
    renderer_classes = [CamelCaseJSONRenderer]

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

    def get(self, request: Request, slug: str) -> Response:
        startup = startup_get(slug=slug)
        if startup is None:  # checked first: a 404 spends nothing
            raise NotFound(f"No startup with slug '{slug}'")
        with quota_reservation(caller=request_caller(request), wanted=1) as reservation:
            data = StartupDetailSerializer(startup, context={"request": request}).data
            reservation.use(1)
        return Response({"data": data})


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
