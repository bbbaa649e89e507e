from django.apps import AppConfig


class WebConfig(AppConfig):
    # Not "site": that name is the standard library's, imported before Django starts.
    name = "web"
    default_auto_field = "django.db.models.BigAutoField"
