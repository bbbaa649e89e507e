from django.apps import AppConfig


class TransparencyConfig(AppConfig):
    name = "transparency"
    verbose_name = "Transparency log"
    default_auto_field = "django.db.models.BigAutoField"
