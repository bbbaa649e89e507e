"""The dataset: startups, their people and links, and verified revenue.

Money is whole US dollars (integers) unless a `currency` field says otherwise; never cents.
Unknown values are NULL, never 0.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower


def nullable(field: type[models.Field], **options) -> models.Field:
    """A column whose unknown value is NULL (never 0 or ""), optional in forms and the admin."""
    return field(null=True, blank=True, **options)


class Startup(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    icon = nullable(models.URLField, max_length=500)
    description = nullable(models.TextField)
    website = nullable(models.URLField, max_length=500)
    category = nullable(models.CharField, max_length=100)
    # Extra categories beyond the primary one (the AI profile lists both).
    categories = models.JSONField(default=list, blank=True)
    industry = nullable(models.CharField, max_length=100)
    business_type = nullable(models.CharField, max_length=50)
    founded = nullable(models.PositiveSmallIntegerField)
    country = nullable(models.CharField, max_length=100)
    team_size = nullable(models.CharField, max_length=50)
    technologies = models.JSONField(default=list, blank=True)
    # The list item's founderName: the founder to credit, kept on the row so lists need no join.
    founder_name = nullable(models.CharField, max_length=200)

    # Headline revenue. For a verified startup these are written by the sync from its
    # Verification; for the rest they are self-reported (or from public sources if unclaimed).
    mrr = nullable(models.PositiveBigIntegerField)
    arr = nullable(models.PositiveBigIntegerField)
    currency = models.CharField(max_length=3, default="USD")

    # MRR change against the snapshot 30 days before the latest one, as a ratio (0.12 = +12%);
    # written with each daily snapshot (startups/history.py), null without a snapshot that old.
    growth_30d = nullable(models.FloatField)

    on_sale = models.BooleanField(default=False)
    asking_price = nullable(models.PositiveBigIntegerField)

    # Null owner: an unclaimed startup, with figures from public sources.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="startups",
    )
    is_published = models.BooleanField(default=True)
    # AI visibility add-on: live while active and not past its expiry (no expiry = open-ended).
    ai_addon_active = models.BooleanField(default=False)
    ai_addon_expires_at = nullable(models.DateTimeField)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # Default order and MRR-range filters: mrr DESC NULLS LAST, name, slug.
            models.Index(F("mrr").desc(), Lower("name"), "slug", name="startup_mrr_desc"),
            models.Index(Lower("name"), "slug", name="startup_name"),
            models.Index(Lower("category"), name="startup_category"),
            models.Index(fields=["on_sale"], name="startup_on_sale"),
            models.Index(
                fields=["ai_addon_active"],
                name="startup_ai_addon",
                condition=Q(ai_addon_active=True),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(asking_price__isnull=True) | Q(on_sale=True),
                name="startup_asking_price_only_on_sale",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Founder(models.Model):
    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="founders")
    name = models.CharField(max_length=200)
    title = nullable(models.CharField, max_length=100)
    twitter = nullable(models.URLField, max_length=500)
    linkedin = nullable(models.URLField, max_length=500)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.name


class Social(models.Model):
    """A profile of the startup elsewhere; these are also its links for entity matching."""

    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="socials")
    platform = models.CharField(max_length=50)
    url = models.URLField(max_length=500)

    class Meta:
        ordering = ["platform", "id"]

    def __str__(self) -> str:
        return f"{self.platform}: {self.url}"


class Credential(models.TextChoices):
    """What kind of key the verified figures were read with (`verification.credential`), as the
    key check saw it when the founder connected."""

    # A key the founder restricted to the read permissions or scopes we ask for (Stripe's
    # rk_live_ restricted keys, Paddle permissions, Polar and Gumroad scopes).
    RESTRICTED_READ = "restricted_read", "restricted read-only key"
    # A kind of key that can only read, whatever it is given.
    READ_ONLY = "read_only", "read-only key"
    # A key that can also write: the provider issues no read-only key (Lemon Squeezy).
    FULL_ACCESS = "full_access", "full-access key (the provider has no read-only key)"
    # A token that reads aggregate metrics only.
    METRICS_TOKEN = "metrics_token", "metrics-only token"


class SyncedFigures(models.Model):
    """The figures one sync reads from a payment provider, in whole US dollars."""

    provider = models.CharField(max_length=50)
    # Null when the provider has no subscription data.
    mrr = nullable(models.PositiveBigIntegerField)
    arr = nullable(models.PositiveBigIntegerField)
    total_revenue = models.PositiveBigIntegerField()
    last_30_days = models.PositiveBigIntegerField()
    customers = models.PositiveIntegerField()

    class Meta:
        abstract = True


class Verification(SyncedFigures):
    """Figures imported from the startup's connected payment provider (whole US dollars)."""

    startup = models.OneToOneField(Startup, on_delete=models.CASCADE, related_name="verification")
    level = models.CharField(max_length=20, default="verified")
    verified_at = models.DateTimeField()
    currency = models.CharField(max_length=3, default="USD")
    # The methodology the figures were computed with (docs/methodology.md); each sync writes the
    # current one, so figures stored under an earlier version keep it until their next sync.
    methodology_version = models.CharField(max_length=10, default="v2")
    # The connection's key kind when these figures were synced; null: not known (figures from
    # before it was recorded, imports).
    credential = models.CharField(max_length=20, choices=Credential.choices, null=True, blank=True)
    # The provider's own figure where its API publishes one, in whole US dollars:
    # {"mrr", "revenue", "definition", "period"} (verification/services.py); null: none.
    provider_reported = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.startup} via {self.provider}"


class MonthlyRevenue(models.Model):
    """One calendar month (UTC) of verified revenue; a refund counts in the month it happened."""

    verification = models.ForeignKey(Verification, on_delete=models.CASCADE, related_name="monthly")
    month = models.DateField(help_text="First day of the month.")
    gross = models.PositiveBigIntegerField()
    refunds = models.PositiveBigIntegerField(default=0)
    # net = gross - refunds (fees are not subtracted): defined once, by the database.
    net = models.GeneratedField(
        expression=F("gross") - F("refunds"),
        output_field=models.BigIntegerField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["month"]
        constraints = [
            models.UniqueConstraint(fields=["verification", "month"], name="monthly_one_per_month"),
        ]

    def __str__(self) -> str:
        return f"{self.verification.startup} {self.month:%Y-%m}"


class RevenueSnapshot(SyncedFigures):
    """The verified figures as one UTC day ended: the last successful sync of the day wins,
    earlier days are never rewritten (startups/history.py)."""

    startup = models.ForeignKey(Startup, on_delete=models.CASCADE, related_name="snapshots")
    date = models.DateField(help_text="UTC date of the sync.")
    synced_at = models.DateTimeField()

    class Meta:
        ordering = ["date"]
        constraints = [
            models.UniqueConstraint(fields=["startup", "date"], name="snapshot_one_per_day"),
        ]

    def __str__(self) -> str:
        return f"{self.startup} {self.date:%Y-%m-%d}"


class Change(models.Model):
    """One entry of the change sequence: a visible write to one startup (startups/changes.py).

    Written in the same transaction as the write it describes, in commit order (the id is the
    sequence a consumer checkpoints on). No foreign key: a deleted startup's tombstone stays.
    """

    class Kind(models.TextChoices):
        CREATED = "created"
        UPDATED = "updated"
        DELETED = "deleted"
        UNPUBLISHED = "unpublished"

    id = models.BigAutoField(primary_key=True)
    startup_id = models.BigIntegerField()
    slug = models.CharField(max_length=200)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # What changed, as the API names it (camelCase, dotted: "revenue.mrr"); [] = not itemised.
    fields = models.JSONField(default=list, blank=True)
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["startup_id", "id"], name="change_startup"),
            models.Index(fields=["at"], name="change_at"),
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.kind} {self.slug}"
