from django.apps import AppConfig


class StartupsConfig(AppConfig):
    name = "startups"

    def ready(self) -> None:
        from startups import signals  # noqa: F401 - connects the invalidation receivers
