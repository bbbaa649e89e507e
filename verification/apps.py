from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"
    verbose_name = "Verified revenue"

    def ready(self) -> None:
        from startups.trust import provider_titles_register
        from verification import checks  # noqa: F401 - registers the system checks
        from verification.providers import PROVIDERS

        provider_titles_register({name: provider.title for name, provider in PROVIDERS.items()})
        _register_invalidation()


def _register_invalidation() -> None:
    """Every surface shows a connection's provider and `status` (a failed sync saves its
    connection and nothing else); the rest is the sync's bookkeeping (leases, attempts, the
    key, the provider account) or stamps a sync that changed nothing visible writes without
    replacing the data token (`last_synced_at`, docs/architecture.md)."""
    from core import invalidation
    from verification.models import ProviderConnection

    shown = {"id", "startup", "provider", "credential", "status"}
    hidden = {field.name for field in ProviderConnection._meta.concrete_fields} - shown
    invalidation.register("data", ProviderConnection, ignores=hidden)
