"""One error shape for every API surface: {"error": {"code": ..., "message": ...}}.

Services raise ApiError subclasses; DRF's exception handler and the plain-Django 404/500 hooks
below render them. Keys are single words so the camelCase renderer leaves errors alike.
"""

import json
import sys

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from core.jsonrpc import error_response, readable_id
from core.requestid import current_request_id
from core.surfaces import is_api, is_machine_read, is_mcp_path


class ApiError(exceptions.APIException):
    """Base for errors the API documents: an HTTP status, a stable code and a message."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "bad_request"
    message = "The request could not be understood."

    def __init__(self, message: str | None = None, *, headers: dict[str, str] | None = None):
        self.message = message or self.message
        self.headers = headers or {}
        super().__init__(detail=self.message, code=self.code)


class NotFound(ApiError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"
    message = "Not found."


class ProRequired(ApiError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "pro_required"
    message = "This endpoint is part of the Pro plan."


class InvalidCursor(ApiError):
    """A cursor the server did not issue, or one cut or edited: a token, not a filter, so it
    is refused rather than ignored (a sync loop would otherwise start over)."""

    code = "invalid_cursor"
    message = (
        "This cursor was not issued by this server or was changed: send `meta.nextCursor` "
        "exactly as received, or leave `cursor` out to start from the beginning."
    )


class CursorExpired(ApiError):
    status_code = status.HTTP_410_GONE
    code = "cursor_expired"
    message = (
        "Changes after this cursor were pruned (the feed keeps them for CHANGE_RETENTION_DAYS): "
        "read the feed again from the start, without `cursor`, and replace your copy."
    )


class InvalidApiKey(ApiError):
    status_code = status.HTTP_401_UNAUTHORIZED
    code = "invalid_api_key"
    message = "The API key is wrong or was revoked."


class EmailNotConfirmed(InvalidApiKey):
    """A good key of an account whose e-mail address is not confirmed yet. A kind of refused
    key, so every place that refuses keys refuses it too (never served as anonymous)."""

    status_code = status.HTTP_403_FORBIDDEN
    code = "email_not_confirmed"
    message = (
        "This key's account has not confirmed its e-mail address yet: open the link in the "
        "confirmation e-mail, or sign in at /dashboard/ to send a new one."
    )


class RateLimited(ApiError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "rate_limited"
    message = "Too many requests; slow down and retry after `Retry-After` seconds."


class InvalidParameter(ApiError):
    code = "invalid_parameter"
    message = "A query parameter is missing or out of range."


class ApiKeyInQuery(ApiError):
    code = "api_key_in_query"
    message = (
        "Never put an API key in the URL (it ends up in logs and histories): send it as "
        "'Authorization: Bearer <key>' or 'X-API-Key: <key>'."
    )


class QuotaExceeded(ApiError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "monthly_quota_exceeded"
    message = "The Free monthly allowance is used up."


def error_body(code: str, message: str) -> dict:
    # `requestId` is one word to the camelCase renderer, so both surfaces spell it alike.
    return {"error": {"code": code, "message": message, "requestId": current_request_id()}}


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable code, e.g. `not_found`.")
    message = serializers.CharField(help_text="What went wrong, for people.")
    requestId = serializers.CharField(  # noqa: N815 - the wire name, on every surface
        allow_null=True,
        help_text="The response's `X-Request-Id`: quote it when reporting a problem.",
    )


class ErrorSerializer(serializers.Serializer):
    """The declared shape of `error_body` (for the OpenAPI document; never used to render)."""

    error = ErrorDetailSerializer()


# DRF's own exceptions, mapped to stable codes.
_DRF_CODES = {
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.ParseError: "invalid_request",
    exceptions.NotFound: "not_found",
    exceptions.AuthenticationFailed: "invalid_api_key",
    exceptions.NotAuthenticated: "invalid_api_key",
    exceptions.Throttled: "rate_limited",
    exceptions.ValidationError: "invalid_request",
}


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Render every handled exception in the spec's error shape; real 500s are not caught."""
    # Imported here: rest_framework.views loads the authentication classes at import time,
    # and they import this module, so a module-level import would be circular.
    from rest_framework.views import exception_handler

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ApiError):
        code, message = exc.code, exc.message
        for name, value in exc.headers.items():
            response[name] = value
    else:
        code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
        detail = getattr(exc, "detail", "")
        message = detail if isinstance(detail, str) else str(detail)
    response.data = error_body(code, str(message))
    return response


def json_error(
    code: str, message: str, status_code: int, headers: dict[str, str] | None = None
) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code, headers=headers)


# How long clients are told to wait when PostgreSQL is unreachable or too slow.
DATABASE_RETRY_AFTER_SECONDS = 5
# JSON-RPC error code of the API's own errors on /api/mcp; `data.code` names the spec code.
MCP_API_ERROR = -32010


def is_database_unavailable(error: BaseException | None) -> bool:
    """Whether `error` means PostgreSQL cannot serve now (refused, timed out, dropped, past the
    request's deadline), as opposed to a bug in a query. psycopg raises OperationalError for all
    of these and Django raises InterfaceError for a connection that was already closed."""
    if isinstance(error, OperationalError | InterfaceError):
        return True
    # A query on a connection Django had marked unusable surfaces as a bare DatabaseError
    # whose cause is the OperationalError.
    return isinstance(error, DatabaseError) and isinstance(
        error.__cause__, OperationalError | InterfaceError
    )


def _database_slow(error: BaseException | None) -> bool:
    """Slow: the database was reached (or is still being waited for) but did not answer in
    time: the request's deadline, PostgreSQL's statement timeout, or a connect timeout.
    Anything else (refused, reset, unknown host, connection lost) is "unreachable"."""
    from core import dbdeadline

    if dbdeadline.exceeded():
        return True
    cause = error
    while cause is not None:
        if type(cause).__name__ in ("QueryCanceled", "DeadlineExceeded", "ConnectionTimeout"):
            return True
        if "timeout expired" in str(cause) or "timed out" in str(cause):
            return True
        cause = cause.__cause__
    return False


def database_unavailable(
    request: HttpRequest | None = None, error: BaseException | None = None
) -> HttpResponse:
    """The 503 every surface answers while the database cannot serve (one place for the rule):
    the spec's error body, or on /api/mcp a JSON-RPC error object carrying the request's id;
    the site's pages (HTML, their Markdown and badge twins) get the styled page
    (templates/503.html), which reads nothing from the database."""
    if _database_slow(error):
        message = "The database is too slow to answer in time; retry shortly."
    else:
        message = "The database is unreachable; retry shortly."
    headers = {"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS), "Cache-Control": "no-store"}
    if request is not None and is_mcp_path(request.path):
        return mcp_api_error(request, "service_unavailable", message, 503, headers)
    if request is not None and not is_machine_read(request.path):
        return _html_unavailable(request, message, headers)
    return json_error("service_unavailable", message, 503, headers=headers)


def _html_unavailable(request: HttpRequest, message: str, headers: dict[str, str]) -> HttpResponse:
    from django.shortcuts import render

    try:
        response = render(request, "503.html", {"message": message}, status=503)
    except Exception:  # the page itself failed: a plain one, still HTML
        response = HttpResponse(
            f"<!doctype html><title>Temporarily unavailable</title><p>{message}</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    for name, value in headers.items():
        response[name] = value
    return response


def json_content_type(request: HttpRequest) -> bool:
    """JSON (`application/json`, `application/*+json`, any parameters), or no Content-Type.

    The MCP view refuses anything else with 415 rather than parsing it anyway: a form or
    text/plain post is what a browser can send cross-site without a CORS preflight.
    """
    media = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    return media in ("", "application/json") or (
        media.startswith("application/") and media.endswith("+json")
    )


def _mcp_request_id(request: HttpRequest) -> str | int | None:
    """The JSON-RPC id of the posted message when the body is JSON that carries a valid one."""
    if not json_content_type(request):
        return None
    try:
        message = json.loads(request.body)
    except Exception:  # unreadable, too large, not JSON: no id to echo
        return None
    return readable_id(message)


def mcp_api_error(
    request: HttpRequest, code: str, message: str, status: int, headers: dict[str, str]
) -> HttpResponse:
    """An API error (bad key, rate limit, outage) as MCP clients expect it: a JSON-RPC error
    object with the request's id, `MCP_API_ERROR` as its code and the spec's code in `data`.
    The one place for this shape: the MCP view, the rate limiter and the 503 all use it."""
    body = error_response(_mcp_request_id(request), MCP_API_ERROR, message, {"code": code})
    return JsonResponse(body, status=status, headers=headers or None)


def handler400(request: HttpRequest, exception: Exception | None = None):
    """Requests Django refuses before any view runs (a bad Host header, more query parameters
    than DATA_UPLOAD_MAX_NUMBER_FIELDS, ...): JSON 400 under /api/, Django's page elsewhere."""
    if is_machine_read(request.path):
        return json_error("invalid_request", "The request is malformed and was refused.", 400)
    from django.views.defaults import bad_request

    return bad_request(request, exception)


def handler404(request: HttpRequest, exception: Exception | None = None):
    """JSON under /api/, the site's styled page (templates/404.html) elsewhere."""
    if is_api(request.path):
        return json_error("not_found", f"No route for {request.path}", 404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler500(request: HttpRequest):
    """JSON under /api/ (and /llms.txt), the site's styled page (templates/500.html) elsewhere;
    the failure is still logged.

    A database outage hit outside a view (a middleware, a session read) is still a 503.
    """
    error = sys.exc_info()[1]
    if is_database_unavailable(error):
        return database_unavailable(request, error)
    if is_machine_read(request.path):
        return json_error("server_error", "Server-side failure; retry later.", 500)
    from django.views.defaults import server_error

    return server_error(request)
