from django.apps import AppConfig


class ApikeysConfig(AppConfig):
    name = "apikeys"

    def ready(self) -> None:
        from apikeys import signals  # noqa: F401 - connects the invalidation receivers
