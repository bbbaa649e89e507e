"""Content-Security-Policy on every answer. HTML pages: scripts, styles, images and frames from
this site only, so third-party text shown on a page (startup descriptions, names, links) can never
run as script even if escaping failed somewhere. Every other answer a browser may render (the SVG
badge, the Markdown twin, plain text, JSON): nothing at all may load or run, in a sandbox, so a
document opened from one of them never acts on the site's origin. X-Content-Type-Options:
nosniff comes from Django's SecurityMiddleware (SECURE_CONTENT_TYPE_NOSNIFF, on by default)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self' data:",
        # style="" attributes only (the dashboard's usage meter, the admin); no inline <style>.
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

# Not a page: the badge draws with presentation attributes only, so it needs nothing either.
DOCUMENT_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"


def content_security_policy(content_type: str) -> str:
    """The policy for an answer of this Content-Type."""
    return CONTENT_SECURITY_POLICY if content_type.startswith("text/html") else DOCUMENT_POLICY


class ContentSecurityPolicyMiddleware:
    """Adds the policy to every answer that does not set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        content_type = response.get("Content-Type")
        # No body to render (304, 204): a 304 must not replace a cached page's own policy.
        if content_type:
            policy = content_security_policy(content_type)
            response.headers.setdefault("Content-Security-Policy", policy)
        return response
