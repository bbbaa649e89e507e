"""Exceptions: every failure the API answers carries its `code`, `message` and `request_id`."""

from __future__ import annotations


class OpenStartupError(Exception):
    """Base of every client error.

    `code` is the API's stable error code (e.g. `invalid_api_key`), `message` its human text,
    `request_id` the server's request id (from the error body's `requestId`, else the
    `X-Request-Id` header; None when the server sent neither) and `status` the HTTP status
    (None when no answer arrived).
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int | None = None,
        request_id: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id

    def __str__(self) -> str:
        parts = [f"{self.code}: {self.message}"]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.request_id:
            parts.append(f"request id {self.request_id}")
        return " | ".join(parts)


class BadRequestError(OpenStartupError):
    """400 and other 4xx answers without a more specific class."""


class AuthenticationError(OpenStartupError):
    """401: the API key is wrong or was revoked (code `invalid_api_key`)."""


class PermissionDeniedError(OpenStartupError):
    """403: e.g. a Pro-only endpoint called with a Free key."""


class NotFoundError(OpenStartupError):
    """404: e.g. an unknown slug (code `not_found`)."""


class RateLimitError(OpenStartupError):
    """429: the allowance is used up. `retry_after` is the server's Retry-After in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(OpenStartupError):
    """5xx after the client's retries ran out."""


class APIConnectionError(OpenStartupError):
    """No HTTP answer at all (refused, reset, timed out) after the retries ran out."""


def error_class(status: int) -> type[OpenStartupError]:
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return BadRequestError
