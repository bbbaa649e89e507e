from django.apps import AppConfig


class FoundersConfig(AppConfig):
    name = "founders"
    verbose_name = "Founders' startups"
