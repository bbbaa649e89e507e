from django.apps import AppConfig


class OpenstartupConfig(AppConfig):
    name = "openstartup"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from openstartup import (
            dbdeadline,  # noqa: F401 - the per-request database deadline
            readcache,  # noqa: F401 - connects the invalidation receivers
        )
