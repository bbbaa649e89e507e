from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from openstartup.errors import NotFound
from quota.plans import FREE, apply_limit
from startups.renderers import CamelCaseJSONRenderer
from startups.selectors import startup_get, startup_page
from startups.serializers import (
    StartupDetailSerializer,
    StartupFilterSerializer,
    StartupListSerializer,
    profile_url,
)


class StartupListView(APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    def get(self, request: Request) -> Response:
        params = StartupFilterSerializer(data=request.query_params)
        params.is_valid()
        plan = FREE
        limit = apply_limit(requested=params.requested_limit(), plan=plan)
        page = params.page_number()
        result = startup_page(
            filters=params.filters(), offset=(page - 1) * limit.value, limit=limit.value
        )
        meta = {
            "total": result.total,
            "page": page,
            "limit": limit.value,
            "has_more": page * limit.value < result.total,
            "plan": plan.name,
            "max_limit": plan.max_limit,
        }
        if limit.notice:
            meta["notice"] = limit.notice
        data = StartupListSerializer(result.startups, many=True).data
        return Response({"data": data, "meta": meta})


class StartupDetailView(APIView):
    renderer_classes = [CamelCaseJSONRenderer]

    def get(self, request: Request, slug: str) -> Response:
        startup = startup_get(slug=slug)
        if startup is None:
            raise NotFound(f"No startup with slug '{slug}'")
        data = StartupDetailSerializer(startup, context={"request": request}).data
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
