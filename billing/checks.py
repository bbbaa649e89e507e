"""`manage.py check`: Stripe billing is configured all the way or not at all."""

from django.conf import settings
from django.core.checks import Warning, register

BILLING_SETTINGS = ("STRIPE_SECRET_KEY", "STRIPE_PRO_PRICE_ID", "STRIPE_WEBHOOK_SECRET")


@register()
def stripe_billing_is_complete(app_configs: object, **kwargs: object) -> list[Warning]:
    given = [name for name in BILLING_SETTINGS if getattr(settings, name)]
    missing = [name for name in BILLING_SETTINGS if not getattr(settings, name)]
    if not given or not missing:
        return []
    return [
        Warning(
            f"Stripe billing is half configured: {', '.join(missing)} unset. Founders could pay "
            "without becoming Pro, or see no upgrade button.",
            hint="Set all of " + ", ".join(BILLING_SETTINGS) + ", or none.",
            id="billing.W001",
        )
    ]
