"""`openstartup.Client`: one httpx connection pool, retries, errors and the resources."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import httpx

from openstartup.attestation import verify_attestation
from openstartup.errors import (
    APIConnectionError,
    OpenStartupError,
    RateLimitError,
    error_class,
)
from openstartup.models import Attestation, HistoryPoint, PageMeta, Startup, StartupDetail

__all__ = ["Client", "ExportIterator", "StartupIterator"]

# No base_url: $OPENSTARTUP_BASE_URL, else the address `make run` serves on this machine.
BASE_URL_ENV = "OPENSTARTUP_BASE_URL"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def _param(value: Any) -> str:
    """A query-string value the way the API spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("datetimes must be timezone-aware (the API speaks UTC)")
        value = value.astimezone(UTC)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(str(item) for item in value)
    return str(value)


def _camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _query(params: Mapping[str, Any]) -> dict[str, str]:
    """snake_case keyword arguments to the API's camelCase query; None means "leave out"."""
    return {_camel(key): _param(value) for key, value in params.items() if value is not None}


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _error(response: httpx.Response) -> OpenStartupError:
    """The exception for an error answer, from the API's `{"error": {code, message}}` body."""
    detail: Any = None
    try:
        detail = response.json().get("error")
    except (ValueError, AttributeError):
        pass
    if not isinstance(detail, Mapping):
        detail = {}
    code = detail.get("code")
    if not isinstance(code, str):
        code = f"http_{response.status_code}"
    message = detail.get("message")
    if not isinstance(message, str):
        message = response.reason_phrase or f"HTTP {response.status_code}"
    request_id = detail.get("requestId") or response.headers.get("X-Request-Id")
    kwargs: dict[str, Any] = {
        "code": code,
        "status": response.status_code,
        "request_id": request_id,
    }
    cls = error_class(response.status_code)
    if cls is RateLimitError:
        kwargs["retry_after"] = _retry_after(response)
    return cls(message, **kwargs)


class Client:
    """The OpenStartup API.

    >>> client = openstartup.Client(base_url="http://127.0.0.1:8000", api_key="osk_...")
    >>> client.startups.get("acme")["revenue"]["mrr"]

    `base_url` is where the service runs; without it, the `OPENSTARTUP_BASE_URL` environment
    variable, else `http://127.0.0.1:8000` (`make run`).

    `api_key` is optional (no key: Free limits per IP address); `key_header` picks how it is
    sent: `"authorization"` (`Authorization: Bearer <key>`, the default) or `"x-api-key"`.
    GET requests are retried `max_retries` times on connection failures, 5xx and 429, waiting
    `backoff * 2**attempt` seconds (with jitter) or the server's `Retry-After` when it gives one.
    A `Retry-After` longer than `max_retry_wait` (e.g. the Free monthly allowance, which resets
    on the 1st) is not waited out: the `RateLimitError` is raised at once, carrying `retry_after`.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        key_header: Literal["authorization", "x-api-key"] = "authorization",
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 60.0,
        http_client: httpx.Client | None = None,
    ):
        if key_header not in ("authorization", "x-api-key"):
            raise ValueError("key_header must be 'authorization' or 'x-api-key'")
        headers = {"Accept": "application/json", "User-Agent": "openstartup-python/0.1.0"}
        if api_key:
            if key_header == "authorization":
                headers["Authorization"] = f"Bearer {api_key}"
            else:
                headers["X-API-Key"] = api_key
        base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self._http = http_client or httpx.Client(timeout=timeout)
        self._http.headers.update(headers)
        self.startups = Startups(self)
        self.changes = Changes(self)
        self.log = Log(self)

    # --- plumbing ---

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _sleep(self, attempt: int, retry_after: float | None) -> None:
        if retry_after is not None:
            delay = retry_after
        else:
            delay = self.backoff * 2**attempt * (0.5 + random.random() / 2)  # noqa: S311
        time.sleep(delay)

    def _send(self, path: str, params: Mapping[str, Any], *, stream: bool = False):
        """One GET with retries; the (open, if streaming) response of a 2xx answer."""
        url = self.base_url + path
        query = _query(params)
        attempt = 0
        while True:
            try:
                request = self._http.build_request("GET", url, params=query)
                response = self._http.send(request, stream=stream)
            except httpx.TransportError as error:
                if attempt >= self.max_retries:
                    raise APIConnectionError(
                        f"{type(error).__name__}: {error}", code="connection_error"
                    ) from error
                self._sleep(attempt, None)
                attempt += 1
                continue
            if response.is_success:
                return response
            if stream:
                response.read()
                response.close()
            retry_after = _retry_after(response)
            retryable = response.status_code in RETRY_STATUSES and attempt < self.max_retries
            if retry_after is not None and retry_after > self.max_retry_wait:
                retryable = False
            if response.status_code == 429 and retry_after is None:
                retryable = False  # a 429 without Retry-After gives no safe moment to retry
            if not retryable:
                raise _error(response)
            self._sleep(attempt, retry_after)
            attempt += 1

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._send(path, params or {}).json()


class StartupIterator:
    """Every startup matching the filters, fetched page by page as you iterate.

    Follows `meta.nextCursor` when the server sends one (cursor paging: stable while data
    changes), else increments `page` while `meta.hasMore` is true. `meta` is the last page's
    meta (plan, quota, notice), None before the first page. Each page spends the page's records
    of a Free allowance, so stop early (`max_items`, or break) when you need only the top few.
    """

    def __init__(self, client: Client, params: dict[str, Any], max_items: int | None):
        self._client = client
        self._params = params
        self._max_items = max_items
        self.meta: PageMeta | None = None

    def pages(self) -> Iterator[list[Startup]]:
        params = dict(self._params)
        cursor: str | None = None
        while True:
            query = {**params, "cursor": cursor} if cursor else params
            body = self._client._get("/api/v1/startups", query)
            self.meta = body["meta"]
            data = body["data"]
            yield data
            if not data:
                return
            if "nextCursor" in self.meta:
                cursor = self.meta["nextCursor"]
                if not cursor:
                    return
                params.pop("page", None)
            elif self.meta.get("hasMore"):
                params["page"] = int(self.meta.get("page") or params.get("page") or 1) + 1
            else:
                return

    def __iter__(self) -> Iterator[Startup]:
        seen = 0
        for page in self.pages():
            for startup in page:
                if self._max_items is not None and seen >= self._max_items:
                    return
                seen += 1
                yield startup
            if self._max_items is not None and seen >= self._max_items:
                return


class Startups:
    """`client.startups`: the /api/v1 startup resources."""

    def __init__(self, client: Client):
        self._client = client

    def list(
        self,
        *,
        q: str | None = None,
        category: str | None = None,
        sort: str | None = None,
        on_sale: bool | None = None,
        min_mrr: float | None = None,
        max_mrr: float | None = None,
        verified: bool | None = None,
        country: str | None = None,
        website: str | None = None,
        updated_since: datetime | str | None = None,
        fields: list[str] | str | None = None,
        limit: int | None = None,
        page: int | None = None,
        max_items: int | None = None,
        **extra: Any,
    ) -> StartupIterator:
        """`GET /api/v1/startups` as an auto-paging iterator of `Startup`.

        Keyword arguments are the list's query parameters in snake_case (`on_sale` is sent as
        `onSale`, `updated_since` as `updatedSince`); any other keyword is passed through the
        same way. `limit` is the page size (the plan's maximum caps it); `max_items` stops the
        iteration after that many startups.
        """
        params = {
            "q": q,
            "category": category,
            "sort": sort,
            "on_sale": on_sale,
            "min_mrr": min_mrr,
            "max_mrr": max_mrr,
            "verified": verified,
            "country": country,
            "website": website,
            "updated_since": updated_since,
            "fields": fields,
            "limit": limit,
            "page": page,
            **extra,
        }
        return StartupIterator(self._client, params, max_items)

    def get(self, slug: str) -> StartupDetail:
        """`GET /api/v1/startups/{slug}`: one startup (NotFoundError for an unknown slug)."""
        return self._client._get(f"/api/v1/startups/{_segment(slug)}")["data"]

    def history(
        self, slug: str, *, from_: date | str | None = None, to: date | str | None = None
    ) -> list[HistoryPoint]:
        """`GET /api/v1/startups/{slug}/history`: daily snapshots between `from_` and `to`
        (inclusive dates, `YYYY-MM-DD`)."""
        params = {"from": from_, "to": to}
        path = f"/api/v1/startups/{_segment(slug)}/history"
        return self._client._get(path, params)["data"]

    def attestation(self, slug: str) -> Attestation:
        """`GET /api/v1/startups/{slug}/attestation`: the signed (JWS, EdDSA) figures."""
        return self._client._get(f"/api/v1/startups/{_segment(slug)}/attestation")["data"]

    def verified_attestation(self, slug: str, *, issuer: str | None = None) -> dict[str, Any]:
        """The claims of `slug`'s attestation, verified against the service's
        `/.well-known/jwks.json` (openstartup.verify_attestation): signature, `exp`, `sub` =
        `slug`, and `iss` = `issuer` (default: this client's `base_url`). Raises
        AttestationError when it does not verify. Needs `openstartup[verify]`."""
        token = self.attestation(slug)["jws"]
        jwks = self._client._get("/.well-known/jwks.json")
        return verify_attestation(
            token, jwks, slug=slug, issuer=self._client.base_url if issuer is None else issuer
        )

    def export(self, **filters: Any) -> ExportIterator:
        """`GET /api/v1/exports/startups.ndjson` (Pro): every matching startup, streamed.

        Filters are the list's, in snake_case. Iterating yields one list item per NDJSON line
        without holding the export in memory; afterwards `meta` is the closing count line's
        meta (`count`, `warnings`). A stream that ends without that line, or with a count that
        differs from the lines received, raises APIConnectionError (`export_incomplete`). A Free
        key gets PermissionDeniedError.
        """
        return ExportIterator(self._client, filters)


TOMBSTONES = ("deleted", "unpublished")


class Changes:
    """`client.changes`: the change feed (`GET /api/v1/changes`), oldest first, resumable.

    >>> copy, cursor = {}, None
    >>> cursor = client.changes.sync(copy, cursor=cursor)  # again later, with the cursor kept

    Store the returned cursor with your copy; a later `sync` applies only what changed since.
    Delivery is at least once and applying entries in order is idempotent, so a sync that stops
    part-way is safe to repeat from the last stored cursor.
    """

    def __init__(self, client: Client):
        self._client = client

    def pages(
        self, *, cursor: str | None = None, limit: int | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], str]]:
        """Each page of entries with the cursor that resumes after it, until caught up."""
        while True:
            body = self._client._get("/api/v1/changes", {"cursor": cursor, "limit": limit})
            cursor = body["meta"]["nextCursor"]
            yield body["data"], cursor
            if not body["meta"].get("hasMore"):
                return

    def sync(
        self, copy: dict[str, Any], *, cursor: str | None = None, limit: int | None = None
    ) -> str:
        """Bring `copy` (slug -> list item) up to date from `cursor` (None: from the start,
        which rebuilds it: the feed holds every startup still published); returns the cursor to
        keep. Upserts `created`/`updated` entries' `startup`, removes tombstoned slugs."""
        if cursor is None:
            copy.clear()
        for entries, resume in self.pages(cursor=cursor, limit=limit):
            cursor = resume
            for entry in entries:
                if entry["kind"] in TOMBSTONES or entry.get("startup") is None:
                    copy.pop(entry["slug"], None)
                else:
                    copy[entry["startup"]["slug"]] = entry["startup"]
        return cursor


class Log:
    """`client.log`: the transparency log (verify what it returns with openstartup.verify)."""

    def __init__(self, client: Client):
        self._client = client

    def tree_head(self, tree_size: int | None = None) -> dict[str, Any]:
        """`GET /api/v1/log/tree-head`: the latest signed tree head, or the one published for
        `tree_size`."""
        return self._client._get("/api/v1/log/tree-head", {"tree_size": tree_size})["data"]

    def entries(self, start: int, end: int) -> list[dict[str, Any]]:
        """`GET /api/v1/log/entries`: leaves `start`..`end` inclusive (the server may return
        fewer: at most 100, and never past the latest tree head)."""
        return self._client._get("/api/v1/log/entries", {"start": start, "end": end})["data"]

    def inclusion_proof(self, leaf: int | str, tree_size: int) -> dict[str, Any]:
        """`GET /api/v1/log/proof/inclusion`: `leaf` is an index or a hex leaf hash."""
        params = {"leaf": leaf, "tree_size": tree_size}
        return self._client._get("/api/v1/log/proof/inclusion", params)["data"]

    def consistency_proof(self, first: int, second: int) -> dict[str, Any]:
        """`GET /api/v1/log/proof/consistency` between tree sizes `first` <= `second`."""
        params = {"first": first, "second": second}
        return self._client._get("/api/v1/log/proof/consistency", params)["data"]

    def jwks(self) -> dict[str, Any]:
        """`GET /.well-known/jwks.json`: the keys attestations and tree heads are signed with
        (keep a copy: verification needs nothing else)."""
        return self._client._get("/.well-known/jwks.json")


class ExportIterator:
    """The NDJSON export as an iterator of list items; `meta` once the stream is complete."""

    def __init__(self, client: Client, filters: dict[str, Any]):
        self._client = client
        self._filters = filters
        self.meta: dict[str, Any] | None = None

    def __iter__(self) -> Iterator[Startup]:
        response = self._client._send("/api/v1/exports/startups.ndjson", self._filters, stream=True)
        received = 0
        try:
            for line in response.iter_lines():
                if not line.strip():
                    continue
                document = json.loads(line)
                if set(document) == {"meta"}:  # the closing count line (items have no "meta")
                    self.meta = document["meta"]
                    continue
                received += 1
                yield document
        except httpx.TransportError as error:
            raise APIConnectionError(
                f"The export was cut short after {received} lines: {error}",
                code="export_incomplete",
            ) from error
        finally:
            response.close()
        if self.meta is None or self.meta.get("count") != received:
            raise APIConnectionError(
                f"The export ended without its count line after {received} lines",
                code="export_incomplete",
                status=response.status_code,
                request_id=response.headers.get("X-Request-Id"),
            )


def _segment(slug: str) -> str:
    """A slug as one URL path segment (a `/` or `?` in it cannot change the path)."""
    from urllib.parse import quote

    return quote(slug, safe="")
