"""The /api/v1 surface's routes (and the attestation keys it publishes). In this order: the
OpenAPI document lists operations as the routes come."""

from django.urls import path, re_path

from restapi import feed_views, views
from transparency import views as log_views
from webhooks import api as webhook_api

urlpatterns = [
    re_path(r"^api/v1/startups/?$", views.StartupListView.as_view(), name="startup-list"),
    # Before the detail: its <anytext:> would take "slug/history" as a slug. Slugs have no "/".
    path(
        "api/v1/startups/<str:slug>/history",
        views.StartupHistoryView.as_view(),
        name="startup-history",
    ),
    path(
        "api/v1/startups/<str:slug>/attestation",
        views.StartupAttestationView.as_view(),
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
    path(".well-known/jwks.json", views.jwks_view, name="jwks"),
    # <anytext:> so that any slug text, slashes and newlines included, reaches the view.
    path(
        "api/v1/startups/<anytext:slug>",
        views.StartupDetailView.as_view(),
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
    re_path(r"^api/v1/categories/?$", views.CategoryListView.as_view(), name="category-list"),
    path(
        "api/v1/exports/startups.ndjson",
        views.StartupExportView.as_view(),
        name="startup-export",
    ),
]
