from collections.abc import Callable

from django.contrib.auth import middleware as auth_middleware
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.http import HttpRequest, HttpResponse

from core.errors import database_unavailable, is_database_unavailable
from core.surfaces import is_api, is_machine_read, is_rest


class _SiteOnly:
    """Runs a browser-session middleware for the site's pages only; API requests pass by.

    The API authenticates by key alone and never reads the session, `request.user` or
    messages, yet building them was about 60 us of every API request (an eighth of a cached
    detail, measured in-process). Skipping them also keeps API answers from clearing or
    varying on the site's session cookie. Subclasses of Django's own, so the admin's checks
    (admin.E408-E410) still find them."""

    get_response: Callable[[HttpRequest], HttpResponse]

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api(request.path):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_SiteOnly, sessions_middleware.SessionMiddleware):
    pass


class AuthenticationMiddleware(_SiteOnly, auth_middleware.AuthenticationMiddleware):
    pass


class MessageMiddleware(_SiteOnly, messages_middleware.MessageMiddleware):
    pass


class ApiHeadersMiddleware:
    """Headers every API answer carries, errors and unknown paths included.

    /api/v1 answers are per caller, so never cached. The API is public: CORS allows any origin
    even when the request sent no Origin header (django-cors-headers adds it only then).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        path = request.path
        if is_rest(path):
            response["Cache-Control"] = "private, no-store"
        if is_machine_read(path):
            response.headers.setdefault("Access-Control-Allow-Origin", "*")
        if request.method == "HEAD" and not response.streaming and response.content:
            # The GET's length, no body: servers drop a HEAD body anyway (gunicorn with a
            # warning per request).
            response["Content-Length"] = str(len(response.content))
            response.content = b""
        return response


class DatabaseUnavailableMiddleware:
    """Turns a database outage met by a view into a quick 503 JSON answer instead of a 500.

    Django closes a connection that raised at the end of the request and the next request
    connects afresh, so service resumes by itself when PostgreSQL is back (no restart).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_database_unavailable(exception):
            return database_unavailable(request, exception)
        return None
