from django.contrib import admin
from django.http import HttpRequest

from startups.models import Startup
from verification.selectors import startup_revenue_is_locked

HEADLINE_REVENUE = ("mrr", "arr", "currency")


@admin.register(Startup)
class StartupAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "mrr", "arr", "is_published")
    search_fields = ("name", "slug")
    list_filter = ("is_published", "on_sale")

    def get_readonly_fields(self, request: HttpRequest, obj: Startup | None = None) -> tuple:
        # Verified figures come only from a provider sync: nobody edits them by hand.
        readonly = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and startup_revenue_is_locked(startup=obj):
            readonly += HEADLINE_REVENUE
        return readonly
