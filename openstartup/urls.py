from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path, register_converter
from drf_spectacular.renderers import OpenApiJsonRenderer2
from drf_spectacular.views import SpectacularAPIView

from aisurface import views as ai_views
from core import health
from core.converters import AnyTextConverter
from core.docs_page import ApiReferenceView
from mcpserver import views as mcp_views
from restapi import views as rest_views
from web import llms, pages

register_converter(AnyTextConverter, "anytext")

handler400 = "core.errors.handler400"
handler404 = "core.errors.handler404"
handler500 = "core.errors.handler500"

urlpatterns = [
    # Probes for load balancers: no authentication, no allowance spent.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("", include("restapi.urls")),
    # The public pages (HTML, cached, no allowance spent): list, profile and its twins.
    path("startups/", pages.startup_browse, name="startup-browse"),
    re_path(r"^startups/(?P<slug>[^/]+)\.md$", pages.profile_markdown, name="startup-markdown"),
    re_path(r"^startups/(?P<slug>[^/]+)/badge\.svg$", pages.profile_badge, name="startup-badge"),
    path("startups/<path:slug>", pages.profile_page, name="startup-profile"),
    # /api/ai: the curated AI-enabled set, snake_case, shared cache.
    re_path(r"^api/ai/discovery/?$", ai_views.AiDiscoveryView.as_view(), name="ai-discovery"),
    path("api/ai/startups/<anytext:slug>", ai_views.AiProfileView.as_view(), name="ai-profile"),
    # Exactly /api/mcp (a trailing slash is served too, never redirected: clients do not follow
    # redirects on POST).
    re_path(r"^api/mcp/?$", mcp_views.mcp_endpoint, name="mcp"),
    path("llms.txt", llms.llms_txt_view, name="llms-txt"),
    # The OpenAPI 3.1 document (generated from the views and serializers) and its docs pages.
    # Public and key-less: a wrong key must not hide the contract.
    path(
        "api/v1/openapi.json",
        SpectacularAPIView.as_view(
            renderer_classes=[OpenApiJsonRenderer2], authentication_classes=[]
        ),
        name="openapi-schema",
    ),
    path(
        "docs/",
        # The split view serves its start-up script from a URL and our template has no inline
        # <style>: the Content-Security-Policy allows scripts and styles from this site only.
        ApiReferenceView.as_view(
            url_name="openapi-schema",
            authentication_classes=[],
            template_name="docs/swagger_ui.html",
        ),
        name="api-docs",
    ),
    path("docs/guide/", pages.api_guide, name="api-guide"),
    path(
        "docs/methodology/<str:version>",
        rest_views.methodology_page,
        name="methodology",
    ),
    path("admin/", admin.site.urls),
    path("", include("accounts.urls")),
    path("", include("web.urls")),
    path("", include("founders.urls")),
    path("", include("billing.urls")),
    path("", include("webhooks.urls")),
    path("", pages.landing, name="home"),
]

if settings.BENCH_VIEWS:  # `make bench` only: the comparison views of bench/views.py
    urlpatterns.insert(0, path("bench/", include("bench.urls")))
