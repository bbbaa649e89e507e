from django.apps import AppConfig
from django.core.signals import request_finished, request_started


class StartupsConfig(AppConfig):
    name = "startups"

    def ready(self) -> None:
        from openstartup import readcache
        from startups import signals  # noqa: F401 - connects the invalidation receivers

        request_started.connect(readcache.request_started, dispatch_uid="readcache-start")
        request_finished.connect(readcache.request_finished, dispatch_uid="readcache-end")
