from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"
    verbose_name = "Verified revenue"

    def ready(self) -> None:
        from startups.trust import provider_titles_register
        from verification import checks  # noqa: F401 - registers the system checks
        from verification.providers import PROVIDERS

        provider_titles_register({name: provider.title for name, provider in PROVIDERS.items()})
