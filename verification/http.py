"""HTTP to the providers over httpx: total deadlines, capped bodies, bounded retries and paging.

Every call has a total deadline (not a per-read timeout: a provider dripping one byte every few
seconds is cut when the deadline passes), and so has the whole sync. Bodies are capped in bytes,
lists in pages, and a list whose cursor stops advancing is an error. No message contains the key.
"""

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Hashable
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


class DeadlineExceeded(ProviderUnavailable):
    """A call or the whole sync ran past its total deadline and was cut."""


class KeyRejected(ProviderError):
    """401/403: the key was revoked, expired or lacks the read permissions we need."""


class NotFound(ProviderError):
    """404 on one object: it no longer exists (a deleted Stripe coupon still applied to the
    subscriptions that have it)."""


class _BodyTooLarge(Exception):
    pass


class ProviderHttp:
    """GET JSON from one provider with one key; paginating is each connector's job.

    `deadline` is a `time.monotonic()` instant by which the whole sync must be done (default:
    PROVIDER_SYNC_DEADLINE_SECONDS from now); each call also stops after
    PROVIDER_HTTP_CALL_DEADLINE_SECONDS, retries and their waits included.
    """

    def __init__(
        self,
        *,
        base_url: str,
        headers: dict[str, str],
        secret: str,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        deadline: float | None = None,
    ):
        self.secret = secret
        self.sleep = sleep
        self.retries = settings.PROVIDER_HTTP_RETRIES
        self.backoff = settings.PROVIDER_HTTP_BACKOFF_SECONDS
        self.max_wait = settings.PROVIDER_HTTP_MAX_WAIT_SECONDS
        self.timeout = settings.PROVIDER_HTTP_TIMEOUT_SECONDS
        self.call_seconds = settings.PROVIDER_HTTP_CALL_DEADLINE_SECONDS
        self.max_body = settings.PROVIDER_HTTP_MAX_BODY_BYTES
        self.max_pages = settings.PROVIDER_MAX_PAGES
        self.max_total = settings.PROVIDER_SYNC_MAX_BYTES
        self.total_bytes = 0
        if deadline is None:
            deadline = time.monotonic() + settings.PROVIDER_SYNC_DEADLINE_SECONDS
        self.deadline = deadline
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
        body = self.get_bytes(path, params)
        try:
            return json.loads(body)
        except ValueError:
            raise ProviderError(f"GET {path} did not answer JSON") from None

    def get_bytes(self, path: str, params: Any = None, *, missing_ok: bool = False) -> bytes | None:
        """The raw body of GET path (a report file), with the same retries and limits as
        `get`; with `missing_ok`, None for a 404 (a report that does not exist)."""
        call_deadline = min(self.deadline, time.monotonic() + self.call_seconds)
        for attempt in range(self.retries + 1):
            self.calls += 1
            last = attempt == self.retries
            try:
                status, headers, body = self._get_within(path, params, call_deadline)
                self.total_bytes += len(body)
                if self.total_bytes > self.max_total:
                    raise ProviderError(
                        f"the provider sent more than {self.max_total // (1024 * 1024)} MB in one "
                        "sync; the sync was stopped (PROVIDER_SYNC_MAX_BYTES)"
                    )
            except httpx.TransportError as exc:
                if last:
                    raise ProviderUnavailable(
                        self._safe(f"GET {path} failed: {type(exc).__name__}")
                    ) from None
                self._wait(attempt, None, f"{type(exc).__name__} on GET {path}", call_deadline)
                continue
            if status in (401, 403):
                raise KeyRejected(f"the provider refused the key (HTTP {status})")
            if status in RETRY_STATUSES:
                if last:
                    raise ProviderUnavailable(
                        f"GET {path} answered HTTP {status} after {self.retries + 1} attempts"
                    )
                self._wait(attempt, headers, f"HTTP {status} on GET {path}", call_deadline)
                continue
            if status == 404 and missing_ok:
                return None
            if status >= 400:
                error = NotFound if status == 404 else ProviderError
                raise error(f"GET {path} answered HTTP {status}")
            return body
        raise AssertionError("unreachable")  # pragma: no cover

    def _get_within(
        self, path: str, params: Any, deadline: float
    ) -> tuple[int, httpx.Headers, bytes]:
        """One GET, cut at `deadline` whatever the server does (a worker thread does the I/O)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._late(path)
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                timeout = min(self.timeout, remaining)
                with self.client.stream("GET", path, params=params, timeout=timeout) as response:
                    outcome["response"] = response
                    declared = response.headers.get("Content-Length")
                    if declared and declared.isdigit() and int(declared) > self.max_body:
                        raise _BodyTooLarge
                    chunks, size = [], 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > self.max_body:
                            raise _BodyTooLarge
                        chunks.append(chunk)
                        if "cut" in outcome:
                            return
                    outcome["result"] = (response.status_code, response.headers, b"".join(chunks))
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=work, name="provider-http", daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            outcome["cut"] = True
            self._cut(outcome.get("response"))
            raise self._late(path)
        if "error" in outcome:
            error = outcome["error"]
            if isinstance(error, _BodyTooLarge):
                raise ProviderError(
                    f"GET {path} sent more than {self.max_body // (1024 * 1024)} MB; "
                    "the sync was stopped"
                )
            if isinstance(error, httpx.TimeoutException) and time.monotonic() >= deadline:
                raise self._late(path)
            raise error
        return outcome["result"]

    def _late(self, path: str) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"the provider did not answer GET {path} in time (deadline "
            f"{self.call_seconds:g} s per call, {settings.PROVIDER_SYNC_DEADLINE_SECONDS:g} s per "
            "sync); the sync was stopped and will be retried at the next refresh"
        )

    @staticmethod
    def _cut(response: httpx.Response | None) -> None:
        """Best effort: shut the socket so the worker's blocked read ends now."""
        if response is None:
            return
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _wait(self, attempt: int, headers: httpx.Headers | None, why: str, deadline: float) -> None:
        delay = self.backoff * 2**attempt
        retry_after = headers.get("Retry-After") if headers is not None else None
        if retry_after is not None:
            try:
                delay = max(delay, float(retry_after))
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        delay = min(delay, self.max_wait)
        if time.monotonic() + delay >= deadline:
            raise DeadlineExceeded(
                f"the provider kept failing ({why}) until the deadline; the sync was stopped"
            )
        logger.info("retrying in %.2fs after %s", delay, why)
        self.sleep(delay)

    def _safe(self, message: str) -> str:
        # Defence in depth: no code path puts the key in a message, and none may by accident.
        return message.replace(self.secret, "***") if self.secret else message


class Pages:
    """The guard every list walk uses: at most PROVIDER_MAX_PAGES pages, and a cursor that moves.

    Call `advance(cursor)` before fetching each next page with that cursor.
    """

    def __init__(self, http: ProviderHttp, path: str):
        self.path = path
        self.max_pages = http.max_pages
        self.count = 1
        self.seen: set[Hashable] = set()

    def advance(self, cursor: Hashable) -> None:
        if cursor in self.seen:
            raise ProviderError(
                f"the provider's pagination of {self.path} did not advance (the same page cursor "
                "came back twice); the sync was stopped"
            )
        self.seen.add(cursor)
        self.count += 1
        if self.count > self.max_pages:
            raise ProviderError(
                f"{self.path} had more than {self.max_pages} pages; the sync was stopped "
                "(PROVIDER_MAX_PAGES)"
            )
