from django.urls import path

from founders import views

urlpatterns = [
    path("dashboard/startups/", views.startup_list, name="founder-startups"),
    path("dashboard/startups/new/", views.startup_new, name="founder-startup-new"),
    path("dashboard/startups/claim/", views.startup_claim_view, name="founder-startup-claim"),
    path("dashboard/startups/<str:slug>/", views.startup_detail, name="founder-startup"),
    path("dashboard/startups/<str:slug>/edit/", views.startup_edit, name="founder-startup-edit"),
    path(
        "dashboard/startups/<str:slug>/connect/",
        views.startup_connect_view,
        name="founder-startup-connect",
    ),
    path("dashboard/startups/<str:slug>/sync/", views.startup_sync, name="founder-startup-sync"),
    path(
        "dashboard/startups/<str:slug>/disconnect/",
        views.startup_disconnect_view,
        name="founder-startup-disconnect",
    ),
]
