"""Deployment checks (`manage.py check --deploy`): no development key for provider keys."""

from django.conf import settings
from django.core.checks import Warning, register


@register(deploy=True)
def provider_key_encryption_is_configured(app_configs: object, **kwargs: object) -> list[Warning]:
    if settings.PROVIDER_KEY_ENCRYPTION_KEYS:
        return []
    return [
        Warning(
            "PROVIDER_KEY_ENCRYPTION_KEYS is unset: provider keys are encrypted with the "
            "development key, which is public.",
            hint="Set PROVIDER_KEY_ENCRYPTION_KEYS to one or more Fernet keys (comma-separated).",
            id="verification.W001",
        )
    ]
