import ipaddress

from django.apps import AppConfig
from django.conf import settings
from django.core import checks


class QuotaConfig(AppConfig):
    name = "quota"

    def ready(self) -> None:
        checks.register(check_trusted_proxies)


def check_trusted_proxies(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A typo in TRUSTED_PROXIES would fail every anonymous request; refuse it at start-up."""
    errors = []
    for entry in settings.TRUSTED_PROXIES:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            errors.append(
                checks.Error(
                    f"TRUSTED_PROXIES entry {entry!r} is not an IP address or network.",
                    id="quota.E001",
                )
            )
    return errors
