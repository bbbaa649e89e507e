from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"
    verbose_name = "Verified revenue"

    def ready(self) -> None:
        from verification import checks  # noqa: F401 - registers the system checks
