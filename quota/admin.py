from django.contrib import admin

from quota.models import MonthlyUsage


@admin.register(MonthlyUsage)
class MonthlyUsageAdmin(admin.ModelAdmin):
    """Read-mostly: operators may correct `used` (e.g. a goodwill reset) but not rekey rows."""

    list_display = ("month", "account", "client", "used")
    list_filter = ("month",)
    search_fields = ("account__username", "account__email", "client")
    readonly_fields = ("account", "client", "month")
    date_hierarchy = "month"

    def has_add_permission(self, request) -> bool:
        return False
