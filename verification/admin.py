from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from verification.connections import provider_accounts_share
from verification.models import ProviderConnection, SharedProviderAccount


@admin.register(ProviderConnection)
class ProviderConnectionAdmin(admin.ModelAdmin):
    """Read-only view of connections. The key is never shown; connect with `connect_provider`."""

    list_display = ("startup", "provider", "account_id", "account_name", "status", "last_synced_at")
    list_filter = ("provider", "status")
    search_fields = ("startup__name", "startup__slug", "account_id", "account_name")
    exclude = ("encrypted_key",)
    readonly_fields = (
        "startup",
        "provider",
        "account_id",
        "account_name",
        "account_domain",
        "api_base",
        "status",
        "last_synced_at",
        "last_attempt_at",
        "last_error",
        "fx_rates",
        "created_at",
        "updated_at",
    )
    actions = ["allow_shared_account"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.action(
        description="Allow shared account: the selected connections' provider accounts may "
        "verify more than one startup"
    )
    def allow_shared_account(
        self, request: HttpRequest, queryset: QuerySet[ProviderConnection]
    ) -> None:
        linked = provider_accounts_share(connections=queryset, note=f"by {request.user}")
        self.message_user(request, f"{linked} provider account(s) may be shared.", messages.SUCCESS)


@admin.register(SharedProviderAccount)
class SharedProviderAccountAdmin(admin.ModelAdmin):
    """Provider accounts an operator allowed to verify several startups (delete to undo)."""

    list_display = ("provider", "account_id", "note", "created_at")
    list_filter = ("provider",)
    search_fields = ("account_id", "note")
