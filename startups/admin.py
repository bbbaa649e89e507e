from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from openstartup import readcache
from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification
from verification.selectors import startup_revenue_is_locked

HEADLINE_REVENUE = ("mrr", "arr", "currency")


class FounderInline(admin.TabularInline):
    model = Founder
    extra = 0


class SocialInline(admin.TabularInline):
    model = Social
    extra = 0


class MarksDataChanged:
    """Deletions (of a startup, or of founders and socials in its inlines) send no signal we
    listen to (openstartup/readcache.py), so the admin marks the copies stale itself."""

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        super().delete_model(request, obj)
        readcache.bump("data")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        super().delete_queryset(request, queryset)
        readcache.bump("data")

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        readcache.bump("data")


@admin.register(Startup)
class StartupAdmin(MarksDataChanged, admin.ModelAdmin):
    list_display = ("name", "slug", "category", "mrr", "on_sale", "is_published", "owner")
    list_filter = ("is_published", "on_sale", "ai_addon_active", "category")
    search_fields = ("name", "slug", "category", "description")
    prepopulated_fields = {"slug": ("name",)}
    raw_id_fields = ("owner",)
    inlines = [FounderInline, SocialInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Startup | None = None) -> tuple:
        # Verified figures come only from a provider sync: nobody edits them by hand.
        readonly = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and startup_revenue_is_locked(startup=obj):
            readonly += HEADLINE_REVENUE
        return readonly


class MonthlyRevenueInline(admin.TabularInline):
    model = MonthlyRevenue
    extra = 0
    can_delete = False
    fields = readonly_fields = ("month", "gross", "refunds", "net")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Verification)
class VerificationAdmin(admin.ModelAdmin):
    """Verified figures come only from the provider sync: operators can look, not edit."""

    list_display = ("startup", "provider", "level", "verified_at", "mrr", "total_revenue")
    list_filter = ("provider", "level")
    search_fields = ("startup__name", "startup__slug")
    inlines = [MonthlyRevenueInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
