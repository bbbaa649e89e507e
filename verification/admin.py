from django.contrib import admin
from django.http import HttpRequest

from verification.models import ProviderConnection


@admin.register(ProviderConnection)
class ProviderConnectionAdmin(admin.ModelAdmin):
    """Read-only view of connections. The key is never shown; connect with `connect_provider`."""

    list_display = ("startup", "provider", "status", "last_synced_at", "last_error")
    list_filter = ("provider", "status")
    search_fields = ("startup__name", "startup__slug")
    exclude = ("encrypted_key",)
    readonly_fields = (
        "startup",
        "provider",
        "api_base",
        "status",
        "last_synced_at",
        "last_attempt_at",
        "last_error",
        "fx_rates",
        "created_at",
        "updated_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
