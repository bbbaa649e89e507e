from django.apps import AppConfig


class ApikeysConfig(AppConfig):
    name = "apikeys"
