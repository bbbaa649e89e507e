"""The request's scheme behind a TLS-terminating proxy, believed only from TRUSTED_PROXIES."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from core.clientip import is_trusted_proxy


class TrustedProxySchemeMiddleware:
    """`X-Forwarded-Proto` decides `request.scheme` (and so HTTPS redirects, secure cookies and
    CSRF origin checks) only when the socket peer is a trusted proxy; from anyone else it is
    ignored. Django's SECURE_PROXY_SSL_HEADER would believe it from every peer, so a client
    reaching the server directly could claim HTTPS. (gunicorn applies the same rule with
    forwarded_allow_ips; this keeps it under any server.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        meta = request.META
        proto = meta.get("HTTP_X_FORWARDED_PROTO")
        if proto is not None and is_trusted_proxy(meta.get("REMOTE_ADDR", "")):
            # The proxy nearest to us appends last.
            scheme = proto.rsplit(",", 1)[-1].strip().lower()
            if scheme in {"http", "https"}:
                meta["wsgi.url_scheme"] = scheme
        return self.get_response(request)
