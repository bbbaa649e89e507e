"""drf-spectacular's settings (settings.SPECTACULAR_SETTINGS), apart because they are long.

OpenAPI 3.1 for /api/v1 and /api/ai, generated from the views and serializers that serve them
(core/openapi.py). Served at /api/v1/openapi.json, rendered at /docs. Nothing here reads the
environment.
"""


def openapi_settings() -> dict:
    """SPECTACULAR_SETTINGS: a new dict per call, so no caller shares another's."""
    return {
        "TITLE": "OpenStartup API",
        "DESCRIPTION": (
            "Read-only startup revenue data. `/api/v1` is the full dataset in camelCase; "
            "`/api/ai` is the curated AI-enabled set in snake_case. Keys are optional: send "
            "`Authorization: Bearer <key>` or `X-API-Key: <key>`. Every path also answers HEAD "
            "(the GET answer's headers, no body, no allowance spent) and OPTIONS (204 with "
            "`Allow`). Guide: /docs/guide"
        ),
        "VERSION": "1.0.0",
        "OAS_VERSION": "3.1.0",
        "SCHEMA_PATH_PREFIX": r"/api/(v1|ai)",
        # Relative: the document describes the server that serves it, wherever it is deployed.
        "SERVERS": [{"url": "/", "description": "The server this document was fetched from."}],
        "SERVE_INCLUDE_SCHEMA": False,
        "COMPONENT_SPLIT_REQUEST": False,
        "PREPROCESSING_HOOKS": ["core.openapi.only_public_api"],
        # One name per choice set, whichever fields share it (the webhook deliveries' own `status`
        # would otherwise rename the verification one).
        "ENUM_NAME_OVERRIDES": {
            "StatusEnum": "startups.freshness.STATUSES",
            "WebhookDeliveryStatusEnum": "webhooks.models.Delivery.Status",
            "EventTypeEnum": "webhooks.limits.EVENT_TYPES",
        },
        "POSTPROCESSING_HOOKS": [
            "drf_spectacular.hooks.postprocess_schema_enums",
            "core.openapi.camelize_rest_components",
            "core.openapi.close_objects",
            "core.openapi_fieldsets.sparse_fieldsets",
            "core.openapi.describe_head_and_options",
            "core.openapi.describe_server_limits",
            "core.openapi_tags.describe_tags",
            "webhooks.schema.document_webhooks",
        ],
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        "REDOC_DIST": "SIDECAR",
        # No deep links: Swagger UI nests them inside its operation buttons (axe:
        # nested-interactive).
        "SWAGGER_UI_SETTINGS": {"deepLinking": False, "displayRequestDuration": True},
    }
