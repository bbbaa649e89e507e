from django.apps import AppConfig


class DemoConfig(AppConfig):
    # Above verification: the seed connects its "verified" startups to the demo provider.
    name = "demo"
    default_auto_field = "django.db.models.BigAutoField"
