"""The provider's own figure beside ours (`verification.providerReported`): what the provider's
API publishes (stored at sync, whole US dollars) and how far ours is from it, in percent."""

from rest_framework import serializers

from startups.models import Verification

PERIODS = ("current", "last_30_days")


def difference_percent(ours: int | None, theirs: int | None) -> float | None:
    """(ours - theirs) / theirs, in percent, one decimal; None when either is unknown or the
    provider's is zero (no percentage of nothing)."""
    if ours is None or not theirs:
        return None
    return round((ours - theirs) * 100 / theirs, 1)


def provider_reported(verification: Verification) -> dict | None:
    """The stored provider figure with the differences from ours: MRR against our MRR, the
    30-day revenue against our `last30Days`."""
    reported = verification.provider_reported
    if not isinstance(reported, dict):
        return None
    mrr, revenue = reported.get("mrr"), reported.get("revenue")
    return {
        "mrr": mrr,
        "revenue": revenue,
        "definition": reported.get("definition") or "",
        "period": reported.get("period"),
        "difference_percent": {
            "mrr": difference_percent(verification.mrr, mrr),
            "revenue": difference_percent(verification.last_30_days, revenue),
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
