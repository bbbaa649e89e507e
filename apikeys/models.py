from django.conf import settings
from django.db import models

from apikeys import keys


class Subscription(models.Model):
    """A paid Pro period of an account. Pro while `current_period_end` is in the future.

    Rows are kept after they end, so a lapsed subscription stays visible to operators.
    """

    class Plan(models.TextChoices):
        PRO = "pro", "Pro"

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions"
    )
    plan = models.CharField(max_length=10, choices=Plan.choices, default=Plan.PRO)
    current_period_end = models.DateTimeField(help_text="Pro until this moment (UTC).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["account", "current_period_end"], name="subscription_active"),
        ]

    def __str__(self) -> str:
        return f"{self.account} {self.get_plan_display()} until {self.current_period_end:%Y-%m-%d}"


class ApiKey(models.Model):
    """An account's API key: only its SHA-256 digest and last four characters are stored."""

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, blank=True)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    last_four = models.CharField(max_length=4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.display} ({self.name})" if self.name else self.display

    @property
    def display(self) -> str:
        return keys.display(self.last_four)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
