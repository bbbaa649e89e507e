"""One local HTTP server for the fakes of outside services (payment providers, Stripe billing).

A threaded server on 127.0.0.1 with an ephemeral port, started and stopped as a context
manager. A fake subclasses `FakeServer` and answers in `get(request)` / `post(request)` /
`delete(request)` with `answer(request, status, headers, body)`: JSON, or a `Stream` written by
hand.
"""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Stream:
    """A body written by hand: `write(wfile)` sends it (slowly, or a lot of it)."""

    def __init__(self, write: Callable[[Any], None]):
        self.write = write


def answer(request: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: Any):
    """Send `body` as JSON with its Content-Length (a `Stream` announces its own, if any)."""
    stream = isinstance(body, Stream)
    payload = b"" if stream else json.dumps(body).encode()
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    if not stream:
        request.send_header("Content-Length", str(len(payload)))
    for name, value in headers.items():
        request.send_header(name, value)
    request.end_headers()
    if not stream:
        request.wfile.write(payload)
        return
    try:
        body.write(request.wfile)
    except OSError:
        pass  # the client hung up, as it should at its deadline


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.fake.get(self)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.server.fake.post(self)

    def do_DELETE(self) -> None:  # noqa: N802 - http.server's name
        self.server.fake.delete(self)

    def log_message(self, *args: object) -> None:
        pass


class FakeServer:
    """`with Fake() as fake:` serves at `fake.base_url` until the block ends."""

    def get(self, request: BaseHTTPRequestHandler) -> None:
        request.send_error(501, "Unsupported method ('GET')")  # as http.server answers

    def post(self, request: BaseHTTPRequestHandler) -> None:
        request.send_error(501, "Unsupported method ('POST')")

    def delete(self, request: BaseHTTPRequestHandler) -> None:
        request.send_error(501, "Unsupported method ('DELETE')")

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.fake = self
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
