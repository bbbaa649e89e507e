from django.apps import AppConfig


class StartupsConfig(AppConfig):
    name = "startups"
