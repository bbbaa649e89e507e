"""A key of the demo provider (verification/providers/demo.py): a recipe whose figures grow
for 390 days and then plateau, ten days before today."""

from datetime import timedelta

from django.utils import timezone

from verification.providers import demo as demo_provider


def demo_key(*, level: int = 1000, kind: str = demo_provider.SUBSCRIPTIONS) -> str:
    today = timezone.now().date()
    return demo_provider.Recipe(
        seed=7,
        level=level,
        start=today - timedelta(days=400),
        plateau=today - timedelta(days=10),
        kind=kind,
    ).key()
