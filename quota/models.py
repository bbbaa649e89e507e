from django.conf import settings
from django.db import models
from django.db.models import Q


class MonthlyUsage(models.Model):
    """Records served in one UTC calendar month to one account, or to one client address.

    Exactly one of `account` and `client` is set. `client` is an IPv4 address or an IPv6 /64
    network. The database is the source of truth for the allowance: a cache restart cannot
    wipe it, and every change is a single conditional UPDATE.
    """

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="monthly_usage",
    )
    client = models.CharField(max_length=64, null=True, blank=True)
    month = models.DateField(help_text="First day of the UTC month.")
    used = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "monthly usage"
        ordering = ["-month", "-used"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(account__isnull=False, client__isnull=True)
                    | Q(account__isnull=True, client__isnull=False)
                ),
                name="usage_account_xor_client",
            ),
            models.UniqueConstraint(
                fields=["account", "month"],
                condition=Q(account__isnull=False),
                name="usage_one_per_account_month",
            ),
            models.UniqueConstraint(
                fields=["client", "month"],
                condition=Q(client__isnull=False),
                name="usage_one_per_client_month",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account or self.client} {self.month:%Y-%m}: {self.used}"


class QuotaHold(models.Model):
    """Records charged to a request whose answer has not been delivered yet.

    The charge (`MonthlyUsage.used`) and its hold are written together when a request reserves
    records; the hold is deleted once the answer has been written to the client (on PostgreSQL
    by the process's next charge, or within about a second: quota/confirmations.py). A hold still
    there after `expires_at` belongs to an answer that never went out (the worker was killed,
    the process died): its records are given back to the allowance (quota/services.py).
    """

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    client = models.CharField(max_length=64, null=True, blank=True)
    month = models.DateField()
    records = models.PositiveIntegerField()
    expires_at = models.DateTimeField()

    class Meta:
        # The charge counts the caller's expired holds (caller, month, expires_at <= now)
        # while it holds the usage row's lock. Holds are deleted milliseconds after they are
        # written, so until a vacuum the table is mostly the caller's dead rows: a lookup by
        # caller alone visited every one of them, these indexes only the few whose expiry
        # has passed (and an index scan marks those dead for the next lookup).
        indexes = [
            models.Index(
                fields=["account", "month", "expires_at"],
                condition=Q(account__isnull=False),
                name="hold_account_month_expiry",
            ),
            models.Index(
                fields=["client", "month", "expires_at"],
                condition=Q(client__isnull=False),
                name="hold_client_month_expiry",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account_id or self.client} {self.month:%Y-%m}: {self.records} held"
