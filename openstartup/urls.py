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
from startups import feed_views
from startups import views as startup_views
from transparency import views as log_views
from web import llms, pages
from webhooks import api as webhook_api

register_converter(AnyTextConverter, "anytext")

handler400 = "core.errors.handler400"
handler404 = "core.errors.handler404"
handler500 = "core.errors.handler500"

urlpatterns = [
    # Probes for load balancers: no authentication, no allowance spent.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    re_path(r"^api/v1/startups/?$", startup_views.StartupListView.as_view(), name="startup-list"),
    # Before the detail: its <anytext:> would take "slug/history" as a slug. Slugs have no "/".
    path(
        "api/v1/startups/<str:slug>/history",
        startup_views.StartupHistoryView.as_view(),
        name="startup-history",
    ),
    path(
        "api/v1/startups/<str:slug>/attestation",
        startup_views.StartupAttestationView.as_view(),
        name="startup-attestation",
    ),
    # The transparency log (RFC 6962 style): public, no allowance spent.
    path("api/v1/log/tree-head", log_views.TreeHeadView.as_view(), name="log-tree-head"),
    path("api/v1/log/entries", log_views.LogEntriesView.as_view(), name="log-entries"),
    path(
        "api/v1/log/proof/inclusion",
        log_views.InclusionProofView.as_view(),
        name="log-inclusion-proof",
    ),
    path(
        "api/v1/log/proof/consistency",
        log_views.ConsistencyProofView.as_view(),
        name="log-consistency-proof",
    ),
    path(".well-known/jwks.json", startup_views.jwks_view, name="jwks"),
    # <anytext:> so that any slug text, slashes and newlines included, reaches the view.
    path(
        "api/v1/startups/<anytext:slug>",
        startup_views.StartupDetailView.as_view(),
        name="startup-detail",
    ),
    re_path(r"^api/v1/changes/?$", feed_views.ChangeFeedView.as_view(), name="change-feed"),
    re_path(
        r"^api/v1/webhooks/endpoints/?$",
        webhook_api.WebhookEndpointListView.as_view(),
        name="webhook-endpoints",
    ),
    # Before the endpoint's own path: its <anytext:> would take "1/deliveries" as an id.
    re_path(
        r"^api/v1/webhooks/endpoints/(?P<endpoint_id>[^/]+)/deliveries/?$",
        webhook_api.WebhookDeliveryListView.as_view(),
        name="webhook-deliveries",
    ),
    path(
        "api/v1/webhooks/endpoints/<anytext:endpoint_id>",
        webhook_api.WebhookEndpointDetailView.as_view(),
        name="webhook-endpoint",
    ),
    re_path(
        r"^api/v1/categories/?$", startup_views.CategoryListView.as_view(), name="category-list"
    ),
    path(
        "api/v1/exports/startups.ndjson",
        startup_views.StartupExportView.as_view(),
        name="startup-export",
    ),
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
        startup_views.methodology_page,
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
