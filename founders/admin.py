from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.domains import email_matches_website
from founders.models import PendingChange, ReportedRevenue, StartupClaim
from founders.reviews import pending_changes_approve, pending_changes_reject
from founders.services import claims_approve, claims_reject


@admin.register(StartupClaim)
class StartupClaimAdmin(admin.ModelAdmin):
    """Claims to check: whether the claimant confirmed their address, and whether the address
    is at the startup's own website domain (a look-alike domain is not)."""

    list_display = (
        "startup",
        "account",
        "email_confirmed",
        "email_at_website_domain",
        "status",
        "created_at",
        "decided_at",
    )
    list_filter = ("status",)
    search_fields = ("startup__name", "startup__slug", "account__email")
    list_select_related = ("startup", "account")
    raw_id_fields = ("startup", "account")
    readonly_fields = (
        "status",
        "email_confirmed",
        "email_at_website_domain",
        "startup_website",
        "created_at",
        "decided_at",
    )
    actions = ["approve", "reject"]

    @admin.display(boolean=True, description="e-mail confirmed")
    def email_confirmed(self, claim: StartupClaim) -> bool:
        return claim.account.email_confirmed_at is not None

    @admin.display(boolean=True, description="e-mail at the website's domain")
    def email_at_website_domain(self, claim: StartupClaim) -> bool:
        return email_matches_website(claim.account.email, claim.startup.website)

    @admin.display(description="startup's website")
    def startup_website(self, claim: StartupClaim) -> str:
        return claim.startup.website or "-"

    @admin.action(description="Approve selected claims (the founder becomes the owner)")
    def approve(self, request: HttpRequest, queryset: QuerySet[StartupClaim]) -> None:
        unconfirmed = queryset.filter(
            status=StartupClaim.Status.PENDING, account__email_confirmed_at__isnull=True
        ).count()
        approved = claims_approve(claims=queryset)
        self.message_user(request, f"{approved} claim(s) approved.", messages.SUCCESS)
        if unconfirmed:
            self.message_user(
                request,
                f"{unconfirmed} claim(s) refused for now: the claimant has not confirmed their "
                "e-mail address (the claim stays pending).",
                messages.ERROR,
            )

    @admin.action(description="Reject selected claims")
    def reject(self, request: HttpRequest, queryset: QuerySet[StartupClaim]) -> None:
        rejected = claims_reject(claims=queryset)
        self.message_user(request, f"{rejected} claim(s) rejected.", messages.SUCCESS)


@admin.register(PendingChange)
class PendingChangeAdmin(admin.ModelAdmin):
    """Founders' changes held for a look: a large self-reported MRR, a verified startup's new
    name or website. Approving publishes them; the public data stays as it was until then."""

    list_display = (
        "startup",
        "kind",
        "mrr",
        "name",
        "website",
        "current_name",
        "current_website",
        "publishes",
        "status",
        "created_at",
    )
    list_filter = ("status", "kind")
    search_fields = ("startup__name", "startup__slug", "name", "website")
    list_select_related = ("startup",)
    # What the founder asked for is shown, never edited: operators approve or reject it.
    readonly_fields = (
        "startup",
        "account",
        "kind",
        "mrr",
        "name",
        "website",
        "current_name",
        "current_website",
        "publishes",
        "status",
        "created_at",
        "decided_at",
    )
    actions = ["approve", "reject"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="public name")
    def current_name(self, change: PendingChange) -> str:
        return change.startup.name

    @admin.display(description="public website")
    def current_website(self, change: PendingChange) -> str:
        return change.startup.website or "-"

    @admin.action(description="Approve selected changes (publish them)")
    def approve(self, request: HttpRequest, queryset: QuerySet[PendingChange]) -> None:
        approved = pending_changes_approve(changes=queryset)
        self.message_user(request, f"{approved} change(s) approved.", messages.SUCCESS)

    @admin.action(description="Reject selected changes (the public data stays as it is)")
    def reject(self, request: HttpRequest, queryset: QuerySet[PendingChange]) -> None:
        rejected = pending_changes_reject(changes=queryset)
        self.message_user(request, f"{rejected} change(s) rejected.", messages.SUCCESS)


@admin.register(ReportedRevenue)
class ReportedRevenueAdmin(admin.ModelAdmin):
    list_display = ("startup", "mrr", "updated_at")
    search_fields = ("startup__name", "startup__slug")
    raw_id_fields = ("startup",)
