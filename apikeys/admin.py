from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apikeys.models import ApiKey, Subscription
from apikeys.services import api_key_revoke


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ("account", "plan", "current_period_end", "created_at")
    list_filter = ("plan",)
    search_fields = ("account__username", "account__email")
    raw_id_fields = ("account",)
    date_hierarchy = "current_period_end"


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are made in the dashboard or with `create_api_key` (the raw key is shown once
    there); here operators look them up and revoke them. Only the digest is stored."""

    list_display = ("display", "name", "account", "created_at", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("account__username", "account__email", "name", "last_four", "=digest")
    readonly_fields = ("display", "account", "digest", "created_at", "last_used_at", "revoked_at")
    fields = ("display", "account", "name", "digest", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Key")
    def display(self, api_key: ApiKey) -> str:
        return api_key.display

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset.filter(revoked_at__isnull=True))
        for api_key in keys:
            api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)
