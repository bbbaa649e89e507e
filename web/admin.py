from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin

from accounts.forms import AdminSignInForm
from accounts.models import User
from apikeys.models import ApiKey, Subscription
from billing.services import BillingUnavailable
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
