from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing (Stripe)"

    def ready(self) -> None:
        from billing import checks  # noqa: F401 - registers the system checks
