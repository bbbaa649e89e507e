"""The provider's own figure beside ours (`verification.providerReported`): what the provider's
API publishes (stored at sync, whole US dollars) and how far ours is from it, in percent; and
the help texts of the two `verification` fields issue 38 added (credential, providerReported)."""

from rest_framework import serializers

PERIODS = ("current", "last_30_days")
CREDENTIAL_HELP = (
    "The kind of key the figures were read with, as the key check saw it at connect: "
    "`restricted_read` (a key restricted to the read permissions we ask for), `read_only`, "
    "`full_access` (Lemon Squeezy issues no read-only key) or `metrics_token`; null when not "
    "recorded."
)
REPORTED_HELP = (
    "The provider's own figure where its API publishes one (Polar's metrics, Paddle's MRR "
    "metrics, Lemon Squeezy's store revenue), with its definition and the difference from "
    "ours; null where the provider has none."
)


def difference_percent(ours: int | None, theirs: int | None) -> float | None:
    """(ours - theirs) / theirs, in percent, one decimal; None when either is unknown or the
    provider's is zero (no percentage of nothing)."""
    if ours is None or not theirs:
        return None
    return round((ours - theirs) * 100 / theirs, 1)


def provider_reported(reported: object, *, mrr: int | None, last_30_days: int) -> dict | None:
    """The stored provider figure (a verification's `provider_reported`) with the differences
    from ours: MRR against our MRR (`mrr`), the 30-day revenue against our `last_30_days`."""
    if not isinstance(reported, dict):
        return None
    theirs_mrr, revenue = reported.get("mrr"), reported.get("revenue")
    return {
        "mrr": theirs_mrr,
        "revenue": revenue,
        "definition": reported.get("definition") or "",
        "period": reported.get("period"),
        "difference_percent": {
            "mrr": difference_percent(mrr, theirs_mrr),
            "revenue": difference_percent(last_30_days, revenue),
        },
    }


class DifferenceSerializer(serializers.Serializer):
    mrr = serializers.FloatField(
        allow_null=True, help_text="(our MRR - theirs) / theirs x 100; null without both."
    )
    revenue = serializers.FloatField(
        allow_null=True,
        help_text="(our `last30Days` - their revenue) / theirs x 100; null without both.",
    )


class ProviderReportedSerializer(serializers.Serializer):
    """Declared shape of `provider_reported()` (rendered as the plain dict it returns)."""

    mrr = serializers.IntegerField(
        allow_null=True, help_text="The provider's own MRR, whole USD; null if it gives none."
    )
    revenue = serializers.IntegerField(
        allow_null=True,
        help_text="The provider's own revenue over `period`, whole USD; null if it gives none.",
    )
    definition = serializers.CharField(help_text="What the provider's figure is, in words.")
    period = serializers.ChoiceField(
        choices=PERIODS,
        help_text="`current`: MRR at the sync; `last_30_days`: revenue over the 30 days before "
        "the sync (MRR, if given, at the sync).",
    )
    difference_percent = DifferenceSerializer(help_text="How far ours is from theirs.")
