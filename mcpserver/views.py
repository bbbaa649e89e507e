"""POST /api/mcp: the Streamable HTTP transport (stateless, JSON responses, no sessions).

Transport only: method, Origin, protocol-version header and authentication checks, JSON
parsing, then one message is handed to `mcpserver.protocol`. Every error body is JSON-RPC JSON.
"""

from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from apikeys.authentication import key_account_of
from mcpserver.protocol import (
    DEFAULT_HEADER_VERSION,
    INVALID_REQUEST,
    PARSE_ERROR,
    SUPPORTED_VERSIONS,
    error_response,
    handle_request,
    unsupported_version,
)
from openstartup.errors import ApiError

# JSON-RPC code for the API's own errors (e.g. 401 invalid_api_key); data.code names the spec code.
API_ERROR = -32010


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(
        orjson.dumps(body), status=status, content_type="application/json", headers=headers
    )


def _json_content_type(request: HttpRequest) -> bool:
    """JSON (`application/json`, `application/*+json`, any parameters), or no Content-Type.

    Anything else is refused with 415 rather than parsed anyway: a form or text/plain post is
    what a browser can send cross-site without a CORS preflight.
    """
    media = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    return media in ("", "application/json") or (
        media.startswith("application/") and media.endswith("+json")
    )


def _origin_allowed(request: HttpRequest) -> bool:
    """No Origin (not a browser) or an allow-listed one (MCP_ALLOWED_ORIGINS, SITE_URL)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    origin = origin.rstrip("/")
    # The site's own origin only when configured: a Host-derived one would let a DNS-rebinding
    # page vouch for itself.
    own = [settings.SITE_URL] if settings.SITE_URL else []
    return origin in [*settings.MCP_ALLOWED_ORIGINS, *own]


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        body = error_response(None, INVALID_REQUEST, "Method not allowed: send JSON-RPC by POST")
        return _json(body, status=405, headers={"Allow": "POST"})
    if not _origin_allowed(request):
        # DNS-rebinding protection the MCP spec asks for: unknown browser origins are refused.
        return _json(error_response(None, INVALID_REQUEST, "Origin not allowed"), status=403)
    version = request.headers.get("MCP-Protocol-Version", DEFAULT_HEADER_VERSION)
    if version not in SUPPORTED_VERSIONS:
        error = unsupported_version(version, SUPPORTED_VERSIONS)
        return _json(error_response(None, error.code, error.message, error.data), status=400)
    try:
        # MCP calls never spend the allowance: only whether the key is good matters here.
        key_account_of(request)
    except ApiError as error:
        body = error_response(None, API_ERROR, error.message, {"code": error.code})
        return _json(body, status=error.status_code, headers=error.headers or None)

    if not _json_content_type(request):
        body = error_response(
            None, INVALID_REQUEST, "Send the JSON-RPC message as application/json"
        )
        return _json(body, status=415)
    try:
        message = orjson.loads(request.body)
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = error_response(
            None, INVALID_REQUEST, f"Request body too large: at most {limit} bytes"
        )
        return _json(body, status=413)
    except orjson.JSONDecodeError:
        return _json(error_response(None, PARSE_ERROR, "Parse error: invalid JSON"), status=400)
    if isinstance(message, list):
        body = error_response(None, INVALID_REQUEST, "Batches are not supported; send one message")
        return _json(body, status=400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        body = error_response(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 message")
        return _json(body, status=400)
    if "method" not in message and "id" in message and ("result" in message or "error" in message):
        # A response to a server request; this server sends none, so there is nothing to do.
        return HttpResponse(status=202)
    if not isinstance(message.get("method"), str):
        request_id = message.get("id")
        request_id = request_id if isinstance(request_id, str | int) else None
        body = error_response(request_id, INVALID_REQUEST, "method must be a string")
        return _json(body, status=400)
    if "id" not in message:
        return HttpResponse(status=202)  # a notification: accepted, nothing to answer
    if not isinstance(message["id"], str | int) or isinstance(message["id"], bool):
        body = error_response(None, INVALID_REQUEST, "id must be a string or an integer")
        return _json(body, status=400)
    status, body = handle_request(message, headers=request.headers, http_request=request)
    return _json(body, status=status)
