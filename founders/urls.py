from django.urls import include, path

from founders import views

urlpatterns = [
    path("dashboard/startups/", views.startup_list, name="founder-startups"),
    path("dashboard/startups/new/", views.startup_new, name="founder-startup-new"),
    path("dashboard/startups/claim/", views.startup_claim_view, name="founder-startup-claim"),
    # One startup's pages, below its slug.
    path(
        "dashboard/startups/<str:slug>/",
        include(
            [
                path("", views.startup_detail, name="founder-startup"),
                path("edit/", views.startup_edit, name="founder-startup-edit"),
                path("connect/", views.startup_connect_view, name="founder-startup-connect"),
                path("sync/", views.startup_sync, name="founder-startup-sync"),
                path(
                    "disconnect/", views.startup_disconnect_view, name="founder-startup-disconnect"
                ),
            ]
        ),
    ),
]
