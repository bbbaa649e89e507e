"""Slow and oversized clients against the real gunicorn: idle or half-sent
connections must not stall the service, and an endless request line is refused, not a 500."""

import socket
import threading
import time
from pathlib import Path

import pytest

from tests.support.processes import gunicorn_config, gunicorn_server, http_get

ROOT = Path(__file__).resolve().parents[2]
QUIET = {"GUNICORN_ACCESS_LOG": "", "LOG_LEVEL": "CRITICAL"}


def healthz_seconds(port: int) -> float:
    started = time.monotonic()
    status, body, _ = http_get(port, "/healthz", {})
    assert (status, body) == (200, {"status": "ok"})
    return time.monotonic() - started


def test_idle_and_half_sent_connections_do_not_stall_healthz():
    with gunicorn_server(QUIET) as port:
        held = []
        try:
            for n in range(80):
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                if n % 2:  # half of them send part of a request head and stop
                    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                held.append(conn)
            time.sleep(0.5)
            # One worker, 80 connections held open: every probe still answers at once.
            assert max(healthz_seconds(port) for _ in range(5)) < 2
        finally:
            for conn in held:
                conn.close()


def test_a_request_head_dripped_byte_by_byte_is_still_served():
    with gunicorn_server(QUIET) as port:
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        for byte in b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n":
            conn.sendall(bytes([byte]))
            time.sleep(0.005)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        conn.close()
        assert answer.startswith(b"HTTP/1.1 200")


def test_a_16_mb_request_line_is_refused_at_once_and_the_server_carries_on():
    with gunicorn_server(QUIET) as port:
        conn = socket.create_connection(("127.0.0.1", port), timeout=20)
        line = b"GET /api/v1/startups?q=" + b"a" * (16 * 1024 * 1024) + b" HTTP/1.1\r\n\r\n"

        def send() -> None:
            try:
                conn.sendall(line)
            except OSError:
                pass  # the server answered and closed before reading it all: expected

        sender = threading.Thread(target=send, daemon=True)
        started = time.monotonic()
        sender.start()
        answer = conn.recv(65536)
        conn.close()
        assert answer.split(b" ", 2)[1] in {b"400", b"414"}, answer[:200]
        assert time.monotonic() - started < 10
        assert healthz_seconds(port) < 2


@pytest.mark.parametrize("size", [8190 + 100])
def test_an_oversized_header_field_is_refused_not_served(size):
    with gunicorn_server(QUIET) as port:
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * size + b"\r\n\r\n")
        answer = conn.recv(65536)
        conn.close()
        assert answer.split(b" ", 2)[1] in {b"400", b"431"}


def test_the_gunicorn_config_bounds_request_sizes_and_uses_the_threaded_worker():
    config = gunicorn_config()
    assert config["worker_class"] == "core.gunicorn_worker.ThreadWorker"
    assert config["limit_request_line"] == "8190"
    assert config["limit_request_field_size"] == "8190"
    assert config["logger_class"] == "core.accesslog.RedactingLogger"


def _keepalive_answers(port: int, count: int) -> list[bytes]:
    """Send `count` requests one after the other on one kept-alive connection; the head of
    each answer, until the server closes the connection."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    heads, buffer = [], b""
    try:
        for _ in range(count):
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            while b"\r\n\r\n" not in buffer:
                chunk = conn.recv(65536)
                if not chunk:
                    return heads
                buffer += chunk
            head, _, rest = buffer.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":", 1)[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            while len(rest) < length:
                rest += conn.recv(65536)
            heads.append(head.lower())
            buffer = rest[length:]
    finally:
        conn.close()
    return heads


def test_a_kept_alive_connection_is_closed_after_its_request_cap_so_workers_share_clients():
    # A connection stays with the worker that accepted it; after GUNICORN_KEEPALIVE_REQUESTS
    # answers the client reconnects and whichever worker is free takes it.
    with gunicorn_server({**QUIET, "GUNICORN_KEEPALIVE_REQUESTS": "5"}) as port:
        heads = _keepalive_answers(port, 8)
    assert len(heads) == 5  # the server closed the connection after the fifth answer
    assert all(b"connection: keep-alive" in head for head in heads[:4])
    assert b"connection: close" in heads[4]
    assert all(head.startswith(b"http/1.1 200") for head in heads)


def _answer_head(conn: socket.socket) -> tuple[bytes, bytes]:
    """The head of the next answer on `conn` (lower-cased) and what followed it."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = conn.recv(65536)
        assert chunk, buffer
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    return head.lower(), rest


def _closed_by_server(conn: socket.socket, seconds: float = 5) -> bool:
    """Whether the server closes `conn` within `seconds` (whatever body bytes come first)."""
    conn.settimeout(seconds)
    try:
        while conn.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


MCP_HEAD = (
    "POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Connection: keep-alive\r\nContent-Length: {length}\r\n\r\n"
)


def test_an_oversized_body_gets_its_413_with_connection_close_and_nothing_hangs():
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE is answered before it is read;
    the answer must say `Connection: close` and the worker close the connection, so the
    client does not send its next request into a connection that is going away."""
    size = 2 * 1024 * 1024  # twice the default limit (1 MiB)
    with gunicorn_server(QUIET) as port:
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)

        def send() -> None:
            try:
                conn.sendall(MCP_HEAD.format(length=size).encode() + b"x" * size)
            except OSError:
                pass  # the server answered and closed before reading it all: expected

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        head, _ = _answer_head(conn)
        assert head.startswith(b"http/1.1 413"), head
        assert b"connection: close" in head.split(b"\r\n"), head
        assert _closed_by_server(conn)
        conn.close()
        sender.join(timeout=10)
        # The next request, on a new connection as the answer asked, is served at once.
        assert healthz_seconds(port) < 2


def test_any_answer_that_left_the_body_unread_closes_and_others_keep_alive():
    with gunicorn_server(QUIET) as port:
        # A small body the view refuses unread (415, not JSON): closed after the answer.
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        head = MCP_HEAD.format(length=5).replace("application/json", "text/plain")
        conn.sendall(head.encode() + b"hello")
        head, _ = _answer_head(conn)
        assert head.startswith(b"http/1.1 415"), head
        assert b"connection: close" in head.split(b"\r\n"), head
        assert _closed_by_server(conn)
        conn.close()
        # A body that was read (a JSON-RPC ping) keeps the connection for the next request.
        ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(MCP_HEAD.format(length=len(ping)).encode() + ping)
        head, _ = _answer_head(conn)
        assert head.startswith(b"http/1.1 200"), head
        assert b"connection: keep-alive" in head.split(b"\r\n"), head
        conn.close()
        assert _keepalive_answers(port, 3) and len(_keepalive_answers(port, 3)) == 3
