from django.urls import include, path

from founders import views

# One startup's pages, below dashboard/startups/<slug>/.
startup_patterns = [
    path("", views.startup_detail, name="founder-startup"),
    path("edit/", views.startup_edit, name="founder-startup-edit"),
    path("connect/", views.startup_connect_view, name="founder-startup-connect"),
    path("sync/", views.startup_sync, name="founder-startup-sync"),
    path("disconnect/", views.startup_disconnect_view, name="founder-startup-disconnect"),
]

urlpatterns = [
    path("dashboard/startups/", views.startup_list, name="founder-startups"),
    path("dashboard/startups/new/", views.startup_new, name="founder-startup-new"),
    path("dashboard/startups/claim/", views.startup_claim_view, name="founder-startup-claim"),
    path("dashboard/startups/<str:slug>/", include(startup_patterns)),
]
