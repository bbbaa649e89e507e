from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


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
