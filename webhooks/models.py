"""Signed webhooks: the endpoints accounts register, the events queued for them (one row per
event and endpoint: the queue and the delivery log) and the delivery process's checkpoint on
the change sequence. Nothing below this app imports it."""

from django.conf import settings
from django.db import models


class Endpoint(models.Model):
    """Where an account wants events sent. The signing secret is stored encrypted (it must be
    recoverable to sign), under the provider keys' encryption keys (verification/crypto.py)."""

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    secret = models.TextField(editable=False)  # Fernet token of "whsec_..."
    events = models.JSONField(default=list)  # event types; [] never stored (all types)
    slugs = models.JSONField(default=list, blank=True)  # [] = every startup
    categories = models.JSONField(default=list, blank=True)  # [] = every category
    verified_only = models.BooleanField(default=False)
    # revenue.changed fires when MRR moves by at least this percent of the previous MRR.
    revenue_threshold_percent = models.PositiveSmallIntegerField(default=10)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=200, blank=True)
    # The delivery process's lease: one delivery per endpoint at a time.
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.url


class Delivery(models.Model):
    """One event for one endpoint: queued (`pending`), then `delivered`, or `failed` after the
    retry schedule. `event_id` comes from the change sequence, so re-reading a change never
    queues an event twice; it is the `webhook-id` of every attempt."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.CharField(max_length=100)
    event_type = models.CharField(max_length=50)
    payload = models.TextField()  # the exact JSON body that is signed and sent
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_id"], name="delivery_once"),
        ]
        indexes = [
            models.Index(fields=["endpoint", "status", "id"], name="delivery_queue"),
            models.Index(fields=["created_at"], name="delivery_created"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} -> {self.endpoint_id}"


class StartupSeen(models.Model):
    """What the delivery process last saw of a startup: revenue.changed and
    verification.status_changed compare against it, and a tombstone's filters use it."""

    startup_id = models.BigIntegerField(primary_key=True)
    slug = models.CharField(max_length=200)
    category = models.CharField(max_length=100, null=True, blank=True)
    categories = models.JSONField(default=list)
    verified = models.BooleanField(default=False)
    mrr = models.PositiveBigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=20, null=True, blank=True)

    def __str__(self) -> str:
        return self.slug


class Checkpoint(models.Model):
    """The last Change id turned into events (one row, name "events")."""

    name = models.CharField(max_length=50, primary_key=True)
    position = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name} at {self.position}"
