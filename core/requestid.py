"""X-Request-Id: one id per request, on the response, in the logs and in every error object.

A sane incoming id (1-128 characters of letters, digits and `._:-`, e.g. a UUID from a proxy)
is kept so a request can be followed across services; anything else is replaced by a new UUID.
"""

import logging
import random
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-Id"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request being served in this thread, or None outside a request."""
    return _current.get()


def request_id_of(incoming: str | None) -> str:
    """The incoming id when it is sane, else a fresh one."""
    if incoming and _SANE.fullmatch(incoming):
        return incoming
    # A random UUID from the process's seeded generator (reseeded in every forked worker):
    # an id needs to be unique, not secret, and os.urandom per request was 20 us here.
    return str(uuid.UUID(int=random.getrandbits(128), version=4))


class RequestIdMiddleware:
    """First in the chain: every response, errors and redirects included, carries the id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request.META.get("HTTP_X_REQUEST_ID"))
        request.request_id = request_id
        reset = _current.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            _current.reset(reset)
        response[HEADER] = request_id
        return response


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every log record ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get() or "-"
        return True
