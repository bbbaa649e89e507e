"""What founders add to the dataset from the dashboard: claims on startups, and the figures
they report themselves (kept apart, so a provider sync never overwrites them)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from startups.models import Startup


class OperatorDecision(models.Model):
    """What a founder asks for and an operator decides in the admin (founders/admin.py): pending
    until approved or rejected, newest first."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class StartupClaim(OperatorDecision):
    """A founder's request to own an unowned startup; an operator approves it in the admin."""

    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="claims")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="startup_claims"
    )

    class Meta(OperatorDecision.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["startup", "account"],
                condition=Q(status="pending"),
                name="claim_one_pending_per_account",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account} claims {self.startup} ({self.status})"


class ReportedRevenue(models.Model):
    """The founder's own MRR (whole USD). The headline figures show it while no provider is
    connected, and go back to it when the provider is disconnected."""

    startup = models.OneToOneField(Startup, on_delete=models.CASCADE, related_name="reported")
    mrr = models.PositiveBigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.startup}: {self.mrr}"


class PendingChange(OperatorDecision):
    """A founder's change that waits for an operator in the admin before it is public: a
    self-reported MRR above SELF_REPORTED_MRR_REVIEW_ABOVE, or a new name or website for a
    verified startup. Meanwhile the public figures and identity stay as they were (a startup
    held at creation is unpublished until the operator decides)."""

    class Kind(models.TextChoices):
        MRR = "mrr", "self-reported MRR"
        IDENTITY = "identity", "name or website"

    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="pending_changes")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="pending_changes",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Kind MRR: the figure waiting (whole US dollars).
    mrr = models.PositiveBigIntegerField(null=True, blank=True)
    # Kind IDENTITY: the new name and website (the website may be unknown).
    name = models.CharField(max_length=200, null=True, blank=True)
    website = models.URLField(max_length=500, null=True, blank=True)
    # The startup was held unpublished at creation for this figure: deciding publishes it.
    publishes = models.BooleanField(default=False)

    class Meta(OperatorDecision.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["startup", "kind"],
                condition=Q(status="pending"),
                name="pending_change_one_per_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.startup}: {self.get_kind_display()} ({self.status})"
