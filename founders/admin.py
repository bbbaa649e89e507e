from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.domains import email_matches_website
from founders.models import PendingChange, ReportedRevenue, StartupClaim
from founders.reviews import pending_changes_approve, pending_changes_reject
from founders.services import claims_approve, claims_reject


class OperatorDecisionAdmin(admin.ModelAdmin):
    """Founders' requests an operator decides (founders.models.OperatorDecision): approve or
    reject the selected ones in bulk through the app's service (which skips decided ones) and
    say how many. Each admin names its services, its noun and its actions' wording."""

    noun = "request"
    action_descriptions: dict[str, str] = {}
    actions = ["approve", "reject"]

    def approve_selected(self, queryset: QuerySet) -> int:
        raise NotImplementedError

    def reject_selected(self, queryset: QuerySet) -> int:
        raise NotImplementedError

    def refused_for_now(self, queryset: QuerySet) -> str | None:
        """Why some selected requests will not be approved yet (shown after the count)."""
        return None

    def get_action(self, action: Any) -> tuple | None:
        found = super().get_action(action)
        if found is not None and found[1] in self.action_descriptions:
            found = (found[0], found[1], self.action_descriptions[found[1]])
        return found

    def approve(self, request: HttpRequest, queryset: QuerySet) -> None:
        refused = self.refused_for_now(queryset)
        approved = self.approve_selected(queryset)
        self.message_user(request, f"{approved} {self.noun}(s) approved.", messages.SUCCESS)
        if refused:
            self.message_user(request, refused, messages.ERROR)

    def reject(self, request: HttpRequest, queryset: QuerySet) -> None:
        rejected = self.reject_selected(queryset)
        self.message_user(request, f"{rejected} {self.noun}(s) rejected.", messages.SUCCESS)


@admin.register(StartupClaim)
class StartupClaimAdmin(OperatorDecisionAdmin):
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
    noun = "claim"
    action_descriptions = {
        "approve": "Approve selected claims (the founder becomes the owner)",
        "reject": "Reject selected claims",
    }

    @admin.display(boolean=True, description="e-mail confirmed")
    def email_confirmed(self, claim: StartupClaim) -> bool:
        return claim.account.email_confirmed_at is not None

    @admin.display(boolean=True, description="e-mail at the website's domain")
    def email_at_website_domain(self, claim: StartupClaim) -> bool:
        return email_matches_website(claim.account.email, claim.startup.website)

    @admin.display(description="startup's website")
    def startup_website(self, claim: StartupClaim) -> str:
        return claim.startup.website or "-"

    def approve_selected(self, queryset: QuerySet[StartupClaim]) -> int:
        return claims_approve(claims=queryset)

    def reject_selected(self, queryset: QuerySet[StartupClaim]) -> int:
        return claims_reject(claims=queryset)

    def refused_for_now(self, queryset: QuerySet[StartupClaim]) -> str | None:
        unconfirmed = queryset.filter(
            status=StartupClaim.Status.PENDING, account__email_confirmed_at__isnull=True
        ).count()
        if not unconfirmed:
            return None
        return (
            f"{unconfirmed} claim(s) refused for now: the claimant has not confirmed their "
            "e-mail address (the claim stays pending)."
        )


@admin.register(PendingChange)
class PendingChangeAdmin(OperatorDecisionAdmin):
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
    noun = "change"
    action_descriptions = {
        "approve": "Approve selected changes (publish them)",
        "reject": "Reject selected changes (the public data stays as it is)",
    }

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="public name")
    def current_name(self, change: PendingChange) -> str:
        return change.startup.name

    @admin.display(description="public website")
    def current_website(self, change: PendingChange) -> str:
        return change.startup.website or "-"

    def approve_selected(self, queryset: QuerySet[PendingChange]) -> int:
        return pending_changes_approve(changes=queryset)

    def reject_selected(self, queryset: QuerySet[PendingChange]) -> int:
        return pending_changes_reject(changes=queryset)


@admin.register(ReportedRevenue)
class ReportedRevenueAdmin(admin.ModelAdmin):
    list_display = ("startup", "mrr", "updated_at")
    search_fields = ("startup__name", "startup__slug")
    raw_id_fields = ("startup",)
