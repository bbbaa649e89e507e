from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from founders.models import ReportedRevenue, StartupClaim
from founders.services import claims_approve, claims_reject


@admin.register(StartupClaim)
class StartupClaimAdmin(admin.ModelAdmin):
    list_display = ("startup", "account", "status", "created_at", "decided_at")
    list_filter = ("status",)
    search_fields = ("startup__name", "startup__slug", "account__email")
    raw_id_fields = ("startup", "account")
    readonly_fields = ("status", "created_at", "decided_at")
    actions = ["approve", "reject"]

    @admin.action(description="Approve selected claims (the founder becomes the owner)")
    def approve(self, request: HttpRequest, queryset: QuerySet[StartupClaim]) -> None:
        approved = claims_approve(claims=queryset)
        self.message_user(request, f"{approved} claim(s) approved.", messages.SUCCESS)

    @admin.action(description="Reject selected claims")
    def reject(self, request: HttpRequest, queryset: QuerySet[StartupClaim]) -> None:
        rejected = claims_reject(claims=queryset)
        self.message_user(request, f"{rejected} claim(s) rejected.", messages.SUCCESS)


@admin.register(ReportedRevenue)
class ReportedRevenueAdmin(admin.ModelAdmin):
    list_display = ("startup", "mrr", "updated_at")
    search_fields = ("startup__name", "startup__slug")
    raw_id_fields = ("startup",)
