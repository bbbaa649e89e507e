"""A local webhook receiver (tests/support/fake_server.py style) that records what it is sent and
answers with the statuses it is told, in turn (the last one repeats)."""

import json
import threading
from http.server import BaseHTTPRequestHandler

from tests.support.fake_server import FakeServer, answer


class Receiver(FakeServer):
    def __init__(self, statuses: tuple[int, ...] = (200,)):
        self.statuses = list(statuses)
        self.received: list[tuple[dict[str, str], bytes]] = []
        self._lock = threading.Lock()

    def post(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length)
        with self._lock:
            self.received.append((dict(request.headers.items()), body))
            status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        answer(request, status, {}, {"ok": status < 300})

    def events(self) -> list[dict]:
        return [json.loads(body) for _, body in self.received]
