"""A fake OpenStartup API that answers from a script, for the clients' retry and error tests
(clients/python and clients/typescript), and the bodies they script."""

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_server import FakeServer


class FakeApi(FakeServer):
    """Answers GETs from a script of (status, headers, body); the last entry repeats."""

    def __init__(self, script: list[tuple[int, dict, Any]]):
        self.script = script
        self.hits: list[str] = []

    def __enter__(self):
        super().__enter__()
        self.url = self.base_url
        return self

    def get(self, request: BaseHTTPRequestHandler) -> None:
        self.hits.append(request.path)
        status, headers, body = self.script[min(len(self.hits), len(self.script)) - 1]
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        request.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(raw)))
        request.end_headers()
        request.wfile.write(raw)


PAGE = {
    "data": [{"slug": "a", "name": "A"}],
    "meta": {"total": 1, "page": 1, "limit": 10, "hasMore": False, "plan": "Free"},
}
OUTAGE = {"error": {"code": "service_unavailable", "message": "Down.", "requestId": "req-5"}}
