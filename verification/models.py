"""A startup's connection to its payment provider: which provider, and its read-only key.

The key is stored only as a Fernet token (verification/crypto.py); it is never logged, never
displayed and never part of an API response. Figures live in startups.Verification.
"""

from django.db import models

from startups.models import Credential, Startup


class ProviderConnection(models.Model):
    class Status(models.TextChoices):
        # The last sync succeeded: the verification figures are current.
        OK = "ok", "ok"
        # Figures (if any) are not current: never synced yet, or the last refresh failed for a
        # reason that may pass (timeouts, 5xx after retries). The last good figures are kept.
        STALE = "stale", "stale"
        # The provider refused the key (401/403). The last good figures are kept, never zeroed.
        KEY_REVOKED = "key_revoked", "key revoked"
        # The last sync failed for a reason retrying will not fix (unexpected data, a currency
        # without an FX rate, another 4xx). The last good figures are kept.
        ERROR = "error", "error"

    startup = models.OneToOneField(
        Startup, on_delete=models.CASCADE, related_name="provider_connection"
    )
    provider = models.CharField(max_length=50)
    encrypted_key = models.TextField(help_text="Fernet token of the read-only key; never shown.")
    # What kind of key it is (startups.models.Credential), decided by the key check at connect.
    credential = models.CharField(max_length=20, choices=Credential.choices, null=True, blank=True)
    # Another host for the provider's API (regional endpoints, the tests' fake providers).
    api_base = models.URLField(max_length=500, null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STALE)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    # What went wrong last time, written by the sync service; never contains the key.
    last_error = models.TextField(null=True, blank=True)
    # The exchange rates the last good sync used: {"EUR": {"rate": "1.08", "date": "2026-11-01"}}.
    fx_rates = models.JSONField(default=dict, blank=True)
    # One sync per connection at a time, across processes: whoever holds an unexpired lease.
    lease_owner = models.CharField(max_length=64, null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # When the fetch behind the stored figures (or the last recorded failure) started: a sync
    # whose fetch started earlier never overwrites them.
    fetch_started_at = models.DateTimeField(null=True, blank=True)
    # The provider account the key reads (Stripe account, Paddle seller, Polar organization,
    # Lemon Squeezy store, Gumroad user), recorded at connect; null where the provider does not
    # say. One provider account verifies one startup unless an operator allows it to be shared
    # (SharedProviderAccount). Name and domain are the provider's own, shown on the profile.
    account_id = models.CharField(max_length=200, null=True, blank=True)
    account_name = models.CharField(max_length=300, null=True, blank=True)
    account_domain = models.CharField(max_length=300, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["status"], name="connection_status"),
            models.Index(fields=["provider", "account_id"], name="connection_account"),
        ]

    def __str__(self) -> str:
        return f"{self.startup} via {self.provider} ({self.status})"


class SharedProviderAccount(models.Model):
    """An operator's explicit link: this provider account may verify more than one startup
    (a company with several products on one Stripe account, say)."""

    provider = models.CharField(max_length=50)
    account_id = models.CharField(max_length=200)
    note = models.CharField(max_length=300, blank=True, help_text="Why it is shared.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "account_id"], name="shared_provider_account_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.account_id} (shared)"
