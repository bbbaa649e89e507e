from django.apps import AppConfig


class RestapiConfig(AppConfig):
    """The /api/v1 surface: views, parameters, paging, fieldsets and envelopes (the shapes
    that modules below share stay in startups/serializers.py)."""

    name = "restapi"
