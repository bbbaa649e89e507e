"""HTTP to the providers over httpx: a timeout per call, bounded retries, no keys in messages."""

import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
from django.conf import settings

logger = logging.getLogger(__name__)

RETRY_STATUSES = {429, 500, 502, 503, 504}


class ProviderError(Exception):
    """The provider could not give us the data; the message is safe to store and show."""

    # Whether retrying later may help (5xx, timeouts) rather than needing a person.
    transient = False


class ProviderUnavailable(ProviderError):
    transient = True


class KeyRejected(ProviderError):
    """401/403: the key was revoked, expired or lacks the read permissions we need."""


class ProviderHttp:
    """GET JSON from one provider with one key; paginating is each connector's job."""

    def __init__(
        self,
        *,
        base_url: str,
        headers: dict[str, str],
        secret: str,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ):
        self.secret = secret
        self.sleep = sleep
        self.retries = settings.PROVIDER_HTTP_RETRIES
        self.backoff = settings.PROVIDER_HTTP_BACKOFF_SECONDS
        self.max_wait = settings.PROVIDER_HTTP_MAX_WAIT_SECONDS
        self._client_options = {
            "base_url": base_url.rstrip("/"),
            "headers": {"User-Agent": "OpenStartup revenue verification", **headers},
            "timeout": settings.PROVIDER_HTTP_TIMEOUT_SECONDS,
            "transport": transport,
        }
        self._client: httpx.Client | None = None
        self.calls = 0

    @property
    def client(self) -> httpx.Client:
        """Made on first use: a connector that needs no network (demo) never pays for the
        TLS context."""
        if self._client is None:
            self._client = httpx.Client(**self._client_options)
        return self._client

    def __enter__(self) -> "ProviderHttp":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()

    def get(self, path: str, params: dict[str, Any] | list[tuple[str, Any]] | None = None) -> Any:
        """The decoded JSON body of GET path, after retrying 429/5xx and network errors."""
        for attempt in range(self.retries + 1):
            self.calls += 1
            last = attempt == self.retries
            try:
                response = self.client.get(path, params=params)
            except httpx.TransportError as exc:
                if last:
                    raise ProviderUnavailable(
                        self._safe(f"GET {path} failed: {type(exc).__name__}")
                    ) from None
                self._wait(attempt, None, f"{type(exc).__name__} on GET {path}")
                continue
            if response.status_code in (401, 403):
                raise KeyRejected(f"the provider refused the key (HTTP {response.status_code})")
            if response.status_code in RETRY_STATUSES:
                if last:
                    raise ProviderUnavailable(
                        f"GET {path} answered HTTP {response.status_code} after "
                        f"{self.retries + 1} attempts"
                    )
                self._wait(attempt, response, f"HTTP {response.status_code} on GET {path}")
                continue
            if response.status_code >= 400:
                raise ProviderError(f"GET {path} answered HTTP {response.status_code}")
            try:
                return response.json()
            except ValueError:
                raise ProviderError(f"GET {path} did not answer JSON") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, response: httpx.Response | None, why: str) -> None:
        delay = self.backoff * 2**attempt
        retry_after = response.headers.get("Retry-After") if response is not None else None
        if retry_after is not None:
            try:
                delay = max(delay, float(retry_after))
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        delay = min(delay, self.max_wait)
        logger.info("retrying in %.2fs after %s", delay, why)
        self.sleep(delay)

    def _safe(self, message: str) -> str:
        # Defence in depth: no code path puts the key in a message, and none may by accident.
        return message.replace(self.secret, "***") if self.secret else message
