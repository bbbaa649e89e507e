from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Infrastructure that imports no app; an app only for its one table (core/models.py)."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import readcache  # noqa: F401 - the per-request token reads
