"""POST /api/mcp: the Streamable HTTP transport (stateless, JSON responses, no sessions).

Transport only: the HTTP method, Origin, authentication, content type and JSON parsing are
checked here, then the one parsed message goes to `mcpserver.protocol.handle_message`, which
decides everything JSON-RPC (protocol version included). Every error body is JSON-RPC JSON.
"""

from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from apikeys.authentication import key_account_of
from core.errors import ApiError, json_content_type, mcp_api_error
from core.jsonrpc import error_response
from mcpserver.protocol import INVALID_REQUEST, PARSE_ERROR, handle_message

# RFC 6750 challenge on every 401, so MCP clients report a bad key, not an OAuth failure.
BEARER_CHALLENGE = 'Bearer realm="mcp", error="invalid_token"'


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(
        orjson.dumps(body), status=status, content_type="application/json", headers=headers
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


def _api_error(request: HttpRequest, error: ApiError) -> HttpResponse:
    headers = dict(error.headers)
    if error.status_code == 401:
        headers.setdefault("WWW-Authenticate", BEARER_CHALLENGE)
    return mcp_api_error(request, error.code, error.message, error.status_code, headers)


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        body = error_response(None, INVALID_REQUEST, "Method not allowed: send JSON-RPC by POST")
        return _json(body, status=405, headers={"Allow": "POST"})
    if not _origin_allowed(request):
        # DNS-rebinding protection the MCP spec asks for: unknown browser origins are refused.
        return _json(error_response(None, INVALID_REQUEST, "Origin not allowed"), status=403)
    try:
        # MCP calls never spend the allowance: only whether the key is good matters here.
        key_account_of(request)
    except ApiError as error:
        return _api_error(request, error)
    if not json_content_type(request):
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
    answer = handle_message(message, headers=request.headers, http_request=request)
    if answer is None:
        return HttpResponse(status=202)  # a notification or a posted response
    status, body = answer
    return _json(body, status=status)
