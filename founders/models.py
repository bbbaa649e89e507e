"""What founders add to the dataset from the dashboard: claims on startups, and the figures
they report themselves (kept apart, so a provider sync never overwrites them)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from startups.models import Startup


class StartupClaim(models.Model):
    """A founder's request to own an unowned startup; an operator approves it in the admin."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"

    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="claims")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="startup_claims"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
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
