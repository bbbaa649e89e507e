"""The OpenAPI 3.1 document of /api/v1 and /api/ai (drf-spectacular), and what it shares.

The document is generated from the views and the serializers that serve the data. Serializers
speak snake_case; `camelize_rest_components` renames the properties of every component that a
/api/v1 operation reaches with the renderer's own `camel_key`, so the REST casing rule lives in
one place (core/renderers.py) for both the data and its description.
"""

import copy
from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.response import Response

from core.errors import ErrorSerializer
from core.openapi_tags import AI_TAG, REST_TAG

__all__ = ["AI_TAG", "REST_TAG"]  # the views tag their operations with these
from core.openapi_fieldsets import SPARSE_SCHEMA
from core.renderers import camel_key, camelize
from core.surfaces import AI_PREFIX, REST_PREFIX


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

    target_class = "startups.filters.LenientField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict:
        return dict(self.target.openapi)


# Statuses that the X-Service-* headers are on: every answer a /api/v1 view gives (a 400 is
# refused earlier, see _ERRORS).
STAMPED_STATUSES = [200, 204, 401, 403, 404, 405, 429, 500]


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

# Every response, whatever its status (core/requestid.py).
REQUEST_ID = _header(
    "X-Request-Id",
    str,
    "This request's id: the client's own `X-Request-Id` when it sent a sane one (1-128 of "
    "`A-Za-z0-9._:-`), else a new UUID. Also `requestId` in error objects and in the logs.",
    required=True,
    response=True,
)
# quota/headers.py: the monthly allowance as the IETF draft RateLimit headers (capped plans).
RATELIMIT_HEADERS = [
    _header(
        "RateLimit-Policy",
        str,
        'Free plan: the monthly records allowance as the IETF draft policy `"monthly";q=100;'
        "w=<seconds in this calendar month>` (one unit is one record). While the per-minute "
        'fair-use limit is on, its policy is listed too: `"fair-use";q=120;w=60`.',
    ),
    _header(
        "RateLimit",
        str,
        'Free plan: `"monthly";r=<records left>;t=<seconds until the reset>`; with the '
        'fair-use limit on, also `"fair-use";r=<requests left now>;t=<seconds until full>`.',
    ),
]
REST_RESPONSE_HEADERS += [*RATELIMIT_HEADERS, REQUEST_ID]

LINK = _header(
    "Link",
    str,
    'RFC 8288 links to other pages of the same query: `rel="first"` always, `rel="prev"` '
    'after page 1 (page paging), `rel="next"` while more follow (by `page`, or by `cursor` '
    "when this page was asked for by cursor).",
    required=True,
    response=[200],
)
CONTENT_ENCODING = _header(
    "Content-Encoding",
    str,
    "`gzip` when the request's Accept-Encoding allows it; absent otherwise.",
    response=[200],
    enum=["gzip"],
)

AI_RESPONSE_HEADERS = [
    REQUEST_ID,
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
PRO_REQUIRED = "403 pro_required"
INVALID_PARAMETER = "400 invalid_parameter"
INVALID_CURSOR = "400 invalid_cursor"
CURSOR_EXPIRED = "410 cursor_expired"
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
    INVALID_CURSOR: (
        "invalid_cursor",
        "`cursor` is not one this server issued (forged, edited or cut short): send "
        "`meta.nextCursor` exactly as received, or leave `cursor` out to start over.",
    ),
    CURSOR_EXPIRED: (
        "cursor_expired",
        "Entries after this cursor were pruned (kept 90 days): read the feed again from the "
        "start, without `cursor`, and replace your copy.",
    ),
    PRO_REQUIRED: (
        "pro_required",
        "Exports are part of the Pro plan: send the key of an account with an active Pro "
        "subscription (Free plans page through /api/v1/startups instead).",
    ),
    INVALID_PARAMETER: (
        "invalid_parameter",
        "The transparency log's parameters are exact: a missing, non-numeric or out-of-range "
        "index or tree size is refused, and the message says which and why.",
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
    """The documented error answers of an operation; all share the one error object. Two
    entries with one status (403 and PRO_REQUIRED) are documented as one answer with both."""
    responses: dict[int, OpenApiResponse] = {}
    for entry in statuses:
        code, description = _ERRORS[entry]
        status = int(str(entry).split()[0])
        example = OpenApiExample(
            code,
            value={
                "error": {
                    "code": code,
                    "message": description,
                    "requestId": "3f2b6c1e-9a4d-4e0b-8c57-2d1f0a9b7e64",
                }
            },
            response_only=True,
        )
        earlier = responses.get(status)
        responses[status] = OpenApiResponse(
            ErrorSerializer,
            description=(f"{earlier.description} Or " if earlier else "")
            + f"`{code}`: {description}",
            examples=[*(earlier.examples if earlier else []), example],
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

# The per-minute fair-use limit (apikeys/ratelimit.py), IETF draft
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


def rest_operation(
    *,
    ok: Any,
    errors: tuple[int | str, ...],
    parameters: tuple = (),
    headers: tuple = (),
    metered: bool = True,
    **kwargs: Any,
):
    """`extend_schema` for a /api/v1 operation: the REST tag; its `parameters`, then the headers
    every answer carries, `Retry-After` when it spends the allowance (`metered`) and its own
    `headers`; the 200 body `ok` and the documented `errors`."""
    return extend_schema(
        tags=[REST_TAG],
        parameters=[
            *parameters,
            *REST_RESPONSE_HEADERS,
            *([RETRY_AFTER] if metered else []),
            *headers,
        ],
        responses={200: ok, **error_responses(*errors)},
        **kwargs,
    )


class DocumentedOptions:
    """For API views: OPTIONS answers 204 with `Allow`, as `describe_head_and_options`
    documents (CORS preflights are answered before any view by django-cors-headers)."""

    def options(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        return Response(status=204)


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


def describe_head_and_options(result: dict, **kwargs: Any) -> dict:
    """Every GET also answers HEAD (its headers, no body, no allowance spent) and OPTIONS (204
    with `Allow`); both are described so clients and linters know them."""
    for item in result.get("paths", {}).values():
        get = item.get("get")
        if not get:
            continue
        head = copy.deepcopy(get)
        head["operationId"] = get["operationId"] + "Head"
        head["summary"] = get["summary"] + " (headers only)"
        head["description"] = (
            "The GET answer's status and headers without a body. Spends none of the monthly "
            "allowance."
        )
        for response in head["responses"].values():
            response.pop("content", None)
            response.pop(SPARSE_SCHEMA, None)
        item["head"] = head
        ok = next(iter(get["responses"].values()))
        headers = {
            name: header
            for name, header in ok.get("headers", {}).items()
            if name.startswith(("X-Service-", "RateLimit", "X-Request-Id"))
        }
        headers["Allow"] = {
            "schema": {"type": "string"},
            "required": True,
            "description": "The methods this path serves: `GET, HEAD, OPTIONS`.",
        }
        item["options"] = {
            "operationId": get["operationId"] + "Options",
            "summary": get["summary"] + " (allowed methods)",
            "description": "204 with `Allow`. CORS preflights (with "
            "`Access-Control-Request-Method`) are answered 200 with the CORS headers instead.",
            "tags": get.get("tags", []),
            "parameters": [p for p in get.get("parameters", []) if p.get("in") == "path"],
            "security": get.get("security", []),
            "responses": {
                "204": {"description": "No body.", "headers": headers},
                **{
                    status: copy.deepcopy(response)
                    for status, response in get["responses"].items()
                    if status in ("401", "500")
                },
            },
        }
    return result


def describe_server_limits(result: dict, **kwargs: Any) -> dict:
    """Every operation may meet gunicorn's bound on the request line (8190 bytes, issue 18):
    a longer URL is refused with 414 by the HTTP server before the API sees it."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault(
                    "414",
                    {
                        "description": "URI Too Long: the request line is longer than 8190 "
                        "bytes; refused by the HTTP server (gunicorn) before the API, without "
                        "the API's headers or error object. Send shorter parameters."
                    },
                )
    return result
