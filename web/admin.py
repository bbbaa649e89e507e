"""The admin: users with their keys and subscriptions; startups with their changes recorded."""

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.forms import AdminSignInForm
from accounts.models import User
from apikeys.models import ApiKey, Subscription
from billing.services import BillingUnavailable
from startups.changes import (
    CREATED,
    DELETED,
    Changed,
    api_fields,
    change_of,
    startups_change_record,
)
from startups.models import Founder, MonthlyRevenue, RevenueSnapshot, Social, Startup, Verification
from verification.selectors import startup_revenue_is_locked
from web.deletion import account_delete


class SubscriptionInline(admin.TabularInline):
    model = Subscription
    extra = 0
    fields = ("plan", "current_period_end", "created_at")
    readonly_fields = ("created_at",)


class ApiKeyInline(admin.TabularInline):
    """Keys are listed, not made here (the raw key is shown once, where it is created)."""

    model = ApiKey
    extra = 0
    can_delete = False
    fields = readonly_fields = ("display", "name", "created_at", "last_used_at", "revoked_at")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(User)
class AccountAdmin(UserAdmin):
    list_display = ("username", "email", "is_verified", "is_staff", "date_joined")
    list_filter = ("is_verified", "is_staff", "is_active")
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Owner verification", {"fields": ("is_verified",)}),
        # Keys work only once this is set (the signed link sets it; operators may too).
        ("E-mail confirmation", {"fields": ("email_confirmed_at",)}),
        ("Allowance", {"fields": ("monthly_allowance_override",)}),
        ("Founders", {"fields": ("founder_max_startups_override",)}),
    )
    inlines = [SubscriptionInline, ApiKeyInline]

    def delete_model(self, request, obj) -> None:
        """An operator's deletion does what the founder's own does (web/deletion.py):
        Pro cancelled at Stripe, startups disconnected, keys revoked; refused if Stripe fails."""
        try:
            account_delete(account=obj)
        except BillingUnavailable as exc:
            messages.error(request, f"{obj} was NOT deleted: {exc}. Try again.")

    def delete_queryset(self, request, queryset) -> None:
        for account in queryset:
            self.delete_model(request, account)


# /admin/login/ gets the same lockout message as the dashboard's sign-in page.
admin.site.login_form = AdminSignInForm


HEADLINE_REVENUE = ("mrr", "arr", "currency")


class FounderInline(admin.TabularInline):
    model = Founder
    extra = 0


class SocialInline(admin.TabularInline):
    model = Social
    extra = 0


class RecordsChanges:
    """An operator's edits, publishing, unpublishing and deletions are visible writes: each
    is recorded in the change sequence (startups/changes.py), in the admin's transaction."""

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        startup = form.instance
        # Only what really differs (the admin flags JSON fields it re-rendered as changed).
        edited = [n for n in form.changed_data if form.initial.get(n) != form.cleaned_data.get(n)]
        fields = api_fields(edited)
        fields += [formset.prefix for formset in formsets if formset.has_changed()]
        old_slug = form.initial.get("slug")
        changes = []
        if change and old_slug and old_slug != startup.slug:
            # Consumers key startups by slug: the old one is gone, the new one is new.
            changes += [Changed(startup.pk, old_slug, DELETED), change_of(startup, kind=CREATED)]
        elif not change:
            changes.append(change_of(startup, kind=CREATED))
        elif fields:
            changes.append(change_of(startup, fields=fields))
        startups_change_record(changes)

    @transaction.atomic
    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        tombstone = Changed(obj.pk, obj.slug, DELETED)
        super().delete_model(request, obj)
        startups_change_record([tombstone])

    @transaction.atomic  # the changelist's bulk delete action runs outside one
    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        rows = queryset.order_by("id").values_list("id", "slug")
        tombstones = [Changed(pk, slug, DELETED) for pk, slug in rows]
        super().delete_queryset(request, queryset)
        startups_change_record(tombstones)


@admin.register(Startup)
class StartupAdmin(RecordsChanges, admin.ModelAdmin):
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


@admin.register(RevenueSnapshot)
class RevenueSnapshotAdmin(admin.ModelAdmin):
    """Daily history is written by the sync only; earlier days are never rewritten."""

    list_display = ("startup", "date", "provider", "mrr", "customers", "last_30_days")
    list_filter = ("provider",)
    search_fields = ("startup__name", "startup__slug")
    date_hierarchy = "date"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
