"""The OpenAPI 3.1 document of /api/v1 and /api/ai (drf-spectacular), and what it shares.

The document is generated from the views and the serializers that serve the data. Serializers
speak snake_case; `camelize_rest_components` renames the properties of every component that a
/api/v1 operation reaches with the renderer's own `camel_key`, so the REST casing rule lives in
one place (startups/renderers.py) for both the data and its description.
"""

from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse

from openstartup.errors import ErrorSerializer
from startups.renderers import camel_key, camelize

REST_PREFIX = "/api/v1/"
AI_PREFIX = "/api/ai/"
REST_TAG = "REST (/api/v1, camelCase)"
AI_TAG = "AI surface (/api/ai, snake_case)"


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """Either header carries the key; sending none is allowed too (Free limits per IP)."""

    target_class = "apikeys.authentication.ApiKeyAuthentication"
    name = ["bearerAuth", "apiKeyHeader"]

    def get_security_definition(self, auto_schema: Any) -> list[dict]:
        both = (
            " The same key may be sent in both headers; two different keys get 401 "
            "`invalid_api_key`. A wrong, revoked or empty key is never treated as no key."
        )
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "description": "`Authorization: Bearer <API_KEY>`." + both,
            },
            {
                "type": "apiKey",
                "in": "header",
                "name": "X-API-Key",
                "description": "`X-API-Key: <API_KEY>`." + both,
            },
        ]

    def get_security_requirement(self, auto_schema: Any) -> list[dict]:
        # Alternatives, not both at once; `{}`: no key at all is fine.
        return [{"bearerAuth": []}, {"apiKeyHeader": []}, {}]


class LenientFieldSchema(OpenApiSerializerFieldExtension):
    """Query parameters document their type, default and range from the field's `openapi`."""

    target_class = "startups.serializers.LenientField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict:
        return dict(self.target.openapi)


# Statuses that the X-Service-* headers are on: every answer a /api/v1 view gives (a 400 is
# refused earlier, see _ERRORS).
STAMPED_STATUSES = [200, 401, 403, 404, 405, 429, 500]


def _header(name: str, kind: Any, description: str, *, required: bool = False, **extra: Any):
    return OpenApiParameter(
        name,
        kind,
        location=OpenApiParameter.HEADER,
        response=extra.pop("response", STAMPED_STATUSES),
        required=required,
        description=description,
        **extra,
    )


# Stamped by quota/headers.py on every /api/v1 response, errors included.
REST_RESPONSE_HEADERS = [
    _header("X-Service-Plan", str, "The caller's plan.", required=True, enum=["Free", "Pro"]),
    _header(
        "X-Service-Max-Limit",
        int,
        "Most records one request can return on the plan.",
        required=True,
    ),
    _header("X-Service-Quota-Limit", int, "Free plan only: records included this month."),
    _header("X-Service-Quota-Remaining", int, "Free plan only: records left this month."),
    _header(
        "X-Service-Quota-Reset",
        OpenApiTypes.DATETIME,
        "Free plan only: when the allowance resets (1st of next month, 00:00 UTC).",
    ),
]

AI_RESPONSE_HEADERS = [
    _header(
        "ETag",
        str,
        "Validator of this answer; send it back in `If-None-Match`.",
        response=[200, 304],
    ),
    _header(
        "Cache-Control",
        str,
        "`public, max-age=300`: shared caches may keep it 5 minutes.",
        response=[200, 304],
    ),
    _header(
        "Age",
        int,
        "Seconds the answer has already spent in the service's cache.",
        response=[200, 304],
    ),
]
AI_REQUEST_HEADERS = [
    OpenApiParameter(
        "If-None-Match",
        str,
        location=OpenApiParameter.HEADER,
        description="An ETag from an earlier answer: 304 with no body while it is still current.",
    )
]

# Status: (code in the body, description). RATE_LIMITED is the 429 of a surface that has no
# monthly allowance.
RATE_LIMITED = "429 rate_limited"
_ERRORS = {
    400: (
        "invalid_request",
        "Refused before reaching the API: an invalid Host header or more query parameters "
        "than the server parses (1000), or `api_key_in_query`: an API key in the URL "
        "(`api_key`, `apikey`, `key`); send it in a header. Invalid parameter *values* are "
        "never errors. Such an answer may lack the X-Service-* headers.",
    ),
    401: (
        "invalid_api_key",
        "The key is wrong, revoked or empty, or the two headers carry different keys.",
    ),
    403: (
        "email_not_confirmed",
        "The key is good, but its account has not confirmed its e-mail address yet (the link "
        "in the confirmation e-mail; the dashboard sends a new one).",
    ),
    404: ("not_found", "No startup with that slug on this surface."),
    405: ("method_not_allowed", "Only GET (and HEAD) are served."),
    429: (
        "monthly_quota_exceeded",
        "The Free allowance is used up until the 1st (UTC); `Retry-After` says in how many "
        "seconds. Or `rate_limited`: more requests in a minute than fair use allows "
        "(`RateLimit` says how many are left; `Retry-After` when to retry).",
    ),
    RATE_LIMITED: (
        "rate_limited",
        "More requests in a minute than fair use allows; `Retry-After` says when to retry.",
    ),
    500: ("server_error", "Server-side failure; retry later."),
}


def error_responses(*statuses: int | str) -> dict[int, OpenApiResponse]:
    """The documented error answers of an operation; all share the one error object."""
    responses = {}
    for entry in statuses:
        code, description = _ERRORS[entry]
        status = int(str(entry).split()[0])
        example = OpenApiExample(
            code, value={"error": {"code": code, "message": description}}, response_only=True
        )
        responses[status] = OpenApiResponse(
            ErrorSerializer, description=f"`{code}`: {description}", examples=[example]
        )
    return responses


RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    location=OpenApiParameter.HEADER,
    response=[429],
    description="Seconds until the monthly allowance resets (`monthly_quota_exceeded`) or until "
    "a request is allowed again (`rate_limited`).",
)

# The per-minute fair-use limit (openstartup/ratelimit.py), IETF draft
# draft-ietf-httpapi-ratelimit-headers; other policies may be listed in the same headers.
FAIR_USE_HEADERS = [
    _header(
        "RateLimit-Policy",
        str,
        'Fair-use policy, e.g. `"fair-use";q=120;w=60` (requests per 60 s window); sent while '
        "the limit is on.",
        response=True,
    ),
    _header(
        "RateLimit",
        str,
        'What is left of it, e.g. `"fair-use";r=119;t=1`: r requests left now, t seconds '
        "until the burst is full again.",
        response=True,
    ),
]


# --- hooks (settings.SPECTACULAR_SETTINGS) ---------------------------------------------------


def only_public_api(endpoints: list, **kwargs: Any) -> list:
    """Only /api/v1 and /api/ai are described (MCP has its own protocol description).

    Routes written as `^api/v1/startups/?$` serve both spellings; the document names the
    spec's canonical one, without the trailing slash.
    """
    return [
        (path.rstrip("/") or "/", *rest)
        for path, *rest in endpoints
        if path.startswith((REST_PREFIX, AI_PREFIX))
    ]


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _reachable(roots: list[Any], schemas: dict) -> set[str]:
    seen: set[str] = set()
    todo = set().union(*(_refs(root) for root in roots)) if roots else set()
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        todo |= _refs(schemas[name]) - seen
    return seen


def _camelize_schema(node: Any) -> Any:
    """camelCase property names (and `required`) of a JSON schema, recursively."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {camel_key(name): _camelize_schema(sub) for name, sub in value.items()}
            elif key == "required" and isinstance(value, list):
                out[key] = [camel_key(name) for name in value]
            elif key in ("example", "examples"):
                out[key] = value
            else:
                out[key] = _camelize_schema(value)
        return out
    if isinstance(node, list):
        return [_camelize_schema(item) for item in node]
    return node


def _operations(result: dict, prefix: str) -> list[dict]:
    return [
        operation
        for path, item in result.get("paths", {}).items()
        if path.startswith(prefix)
        for operation in item.values()
        if isinstance(operation, dict)
    ]


def camelize_rest_components(result: dict, **kwargs: Any) -> dict:
    """Describe /api/v1 in camelCase, as CamelCaseJSONRenderer serves it."""
    schemas = result.get("components", {}).get("schemas", {})
    rest_ops = _operations(result, REST_PREFIX)
    rest = _reachable(rest_ops, schemas)
    other = _reachable(_operations(result, AI_PREFIX), schemas)
    for name in rest:
        camel = _camelize_schema(schemas[name])
        if camel == schemas[name]:
            continue
        if name in other:
            raise ValueError(
                f"Component {name} is served in camelCase on /api/v1 and in snake_case on "
                "/api/ai; give each surface its own serializer component name."
            )
        schemas[name] = camel
    for operation in rest_ops:
        for response in operation.get("responses", {}).values():
            for media in response.get("content", {}).values():
                for example in media.get("examples", {}).values():
                    if "value" in example:
                        example["value"] = camelize(example["value"])
    return result


def close_objects(result: dict, **kwargs: Any) -> dict:
    """Objects are exactly as documented: an undeclared key is a contract violation."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        if schema.get("type") == "object" and "properties" in schema:
            schema.setdefault("additionalProperties", False)
    return result
