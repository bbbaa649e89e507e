from django.apps import AppConfig


class OpenstartupConfig(AppConfig):
    """The roof; an app still for its migrations' history (its one table moved to core)."""

    name = "openstartup"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import dbdeadline  # noqa: F401 - the per-request database deadline
