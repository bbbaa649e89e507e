from django.apps import AppConfig


class QuotaConfig(AppConfig):
    name = "quota"
