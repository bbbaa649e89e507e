from django.apps import AppConfig


class OpenstartupConfig(AppConfig):
    name = "openstartup"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import dbdeadline  # noqa: F401 - the per-request database deadline
        from openstartup import readcache  # noqa: F401 - connects the invalidation receivers
