from django.apps import AppConfig


class AisurfaceConfig(AppConfig):
    name = "aisurface"
