from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from startups import views as startup_views

handler404 = "openstartup.errors.handler404"
handler500 = "openstartup.errors.handler500"

urlpatterns = [
    re_path(r"^api/v1/startups/?$", startup_views.StartupListView.as_view(), name="startup-list"),
    # <path:> so that any slug text, slashes included, reaches the view and its JSON 404.
    path(
        "api/v1/startups/<path:slug>",
        startup_views.StartupDetailView.as_view(),
        name="startup-detail",
    ),
    path("startups/<path:slug>", startup_views.profile_page, name="startup-profile"),
    path("admin/", admin.site.urls),
    path("", include("apikeys.urls")),
    path("", RedirectView.as_view(url="/llms.txt", permanent=False), name="home"),
]
