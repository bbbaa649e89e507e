"""gunicorn's threaded worker, changed so that slow clients cost no thread.

gthread gives every accepted connection to a thread that blocks until the request head has
arrived (after waiting up to 5 s for a first byte). Forty idle connections then hold four
threads for fifty seconds, and a client that sends half its headers holds a thread for good:
`/healthz` waits behind them. This worker reads a request head without blocking instead: while
the head is incomplete the connection waits in the worker's poller, not in a thread, and the
bytes read so far are kept; once the blank line has arrived (or the head is too large, which
the parser then refuses) the request is parsed and served as usual. A head that takes more
than HEAD_TIMEOUT_SECONDS in all, or a connection silent for the keep-alive timeout, is closed.

Request bodies are still read by the thread: the proxy in front buffers them
(docs/deployment.md).

A kept-alive connection also answers at most KEEPALIVE_REQUESTS requests (as Apache's
MaxKeepAliveRequests does), then the response says `Connection: close` and the client
reconnects. A connection stays with the worker that accepted it, so without this a few
long-lived client or proxy connections that all landed on one worker keep it busy while the
others idle (a benchmark with 8 connections and 2 workers measured half the throughput in
about one run of two); a new connection is accepted by whichever worker is free first.
"""

import os
import time

from gunicorn.workers import gthread

HEAD_TIMEOUT_SECONDS = 10.0
HEAD_END = b"\r\n\r\n"
# More than gunicorn's largest request line and header fields can fill: let the parser refuse.
MAX_HEAD_BYTES = 8190 + 100 * 8192
KEEPALIVE_REQUESTS = int(os.environ.get("GUNICORN_KEEPALIVE_REQUESTS") or 100)


def _read_head(conn: gthread.TConn) -> bool | None:
    """Read what the client has sent of the request head without blocking. True: complete;
    None: not yet (wait in the poller); False: the client went away or is too slow."""
    head = getattr(conn, "head", None)
    if head is None:
        head = conn.head = bytearray()
        conn.head_deadline = time.monotonic() + HEAD_TIMEOUT_SECONDS
    conn.sock.setblocking(False)
    try:
        while HEAD_END not in head and len(head) < MAX_HEAD_BYTES:
            chunk = conn.sock.recv(65536)
            if not chunk:
                return False
            head += chunk
    except (BlockingIOError, InterruptedError):
        return None if time.monotonic() < conn.head_deadline else False
    except OSError:
        return False
    return True


class ThreadWorker(gthread.ThreadWorker):
    """gthread.ThreadWorker that parks connections in its poller until their head is in."""

    def handle(self, conn: gthread.TConn):
        if self.cfg.is_ssl or (conn.parser is not None and conn.parser.unreader.buf.getvalue()):
            return super().handle(conn)  # TLS in gunicorn, or bytes read ahead already
        complete = _read_head(conn)
        if complete is None:
            conn.data_ready = False
            return gthread._DEFER
        if not complete:
            return False
        head, conn.head = bytes(conn.head), None
        conn.data_ready = True
        conn.init()
        if getattr(conn, "is_http2", False):
            return False  # HTTP/2 is not offered by this configuration
        conn.parser.unreader.unread(head)
        conn.sock.setblocking(True)
        return super().handle(conn)

    def handle_request(self, req, conn):
        conn.served = getattr(conn, "served", 0) + 1
        if conn.served >= KEEPALIVE_REQUESTS:
            req.must_close = True  # the response says `Connection: close`
        return super().handle_request(req, conn)
