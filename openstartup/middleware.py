from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from openstartup.errors import database_unavailable, is_database_unavailable


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
        if path.startswith("/api/v1/"):
            response["Cache-Control"] = "private, no-store"
        if path.startswith("/api/") or path == "/llms.txt":
            response.headers.setdefault("Access-Control-Allow-Origin", "*")
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
