"""gunicorn's threaded worker, changed so that slow clients cost no thread.

gthread gives every accepted connection to a thread that blocks until the request head has
arrived (after waiting up to 5 s for a first byte). Forty idle connections then hold four
threads for fifty seconds, and a client that sends half its headers holds a thread for good:
`/healthz` waits behind them. This worker reads a request head without blocking instead, on
its main thread (the one that accepts and polls): while the head is incomplete the connection
waits in the worker's poller, not in a thread, and the bytes read so far are kept; once the
blank line has arrived (or the head is too large, which the parser then refuses) the request
is parsed and served as usual. A head that takes more
than HEAD_TIMEOUT_SECONDS in all, or a connection silent for the keep-alive timeout, is closed.

Request bodies are still read by the thread: the proxy in front buffers them
(docs/deployment.md).

A kept-alive connection also answers at most KEEPALIVE_REQUESTS requests (as Apache's
MaxKeepAliveRequests does), then the response says `Connection: close` and the client
reconnects. A connection stays with the worker that accepted it, so without this a few
long-lived client or proxy connections that all landed on one worker keep it busy while the
others idle (a benchmark with 8 connections and 2 workers measured half the throughput in
about one run of two); a new connection is accepted by whichever worker is free first.

An answer sent before the application read the whole request body (a 413 for a body over
DATA_UPLOAD_MAX_MEMORY_SIZE, a 405 or 429 that never looked at it) says `Connection: close` and
the connection is closed after it: gunicorn drains at most 64 KiB of an unread body before
reusing a connection and otherwise drops it, so a response announcing keep-alive would make the
client send its next request into a connection about to close.

The probes have threads of their own. The head is read on the worker's main thread (the one
that accepts and polls), so the worker sees which path a request asks for before any thread
takes it: `GET /healthz` goes to a liveness thread and `GET /readyz` to a readiness thread,
each a pool of one, and everything else to the `threads` pool. With every request thread
waiting on a stalled database (up to DB_REQUEST_DEADLINE_SECONDS each, and more queued behind
them) the liveness probe still answers in milliseconds, and `/readyz` reports the stalled
alias within its own READYZ_DEADLINE_SECONDS instead of queueing behind the requests it is
meant to judge. The two never share a thread: a readiness check waiting on a database cannot
delay liveness. A pool that is truly wedged (every thread busy and none finished for
`timeout` seconds, which no deadline allows) sends `/healthz` into the request pool instead,
so the probe fails and the orchestrator restarts the process rather than hearing "alive" from
a worker that serves nothing.
"""

import os
import selectors
import threading
import time
from concurrent import futures
from functools import partial

from gunicorn.http.body import ChunkedReader, EOFReader, LengthReader
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


def body_unread(body: object) -> bool:
    """Whether part of this request body is still unread on the socket."""
    reader = getattr(body, "reader", None)
    if isinstance(reader, LengthReader):
        return reader.length > 0
    if isinstance(reader, ChunkedReader):
        return reader.parser is not None  # set to None once the last chunk has been read
    if isinstance(reader, EOFReader):
        return not reader.finished
    return False


_serving = threading.local()  # the gunicorn request this thread is answering


def close_when_body_unread(app):
    """The WSGI application, with `Connection: close` on any answer it starts before the
    request body was read to its end (gunicorn then closes the connection after it)."""

    def application(environ, start_response):
        def start(status, headers, exc_info=None):
            req = getattr(_serving, "req", None)
            if req is not None and body_unread(environ.get("wsgi.input")):
                req.must_close = True
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return application


PROBE_PATHS = {b"/healthz": "live", b"/readyz": "ready"}


def probe_of(head: bytes) -> str | None:
    """ "live" or "ready" when `head` is a bodiless GET/HEAD of a probe path, else None."""
    line, _, fields = head.partition(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3 or parts[0] not in (b"GET", b"HEAD"):
        return None
    kind = PROBE_PATHS.get(parts[1].partition(b"?")[0])
    if kind is None:
        return None
    lowered = fields.partition(HEAD_END)[0].lower()
    if b"\ncontent-length:" in b"\n" + lowered or b"transfer-encoding:" in lowered:
        return None  # a body to read: the ordinary way
    return kind


class ThreadWorker(gthread.ThreadWorker):
    """gthread.ThreadWorker that reads request heads on its main thread, parks connections
    in its poller until their head is in, and serves the probes on threads of their own."""

    def init_process(self):
        self.probe_pools = {
            kind: futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"probe-{kind}")
            for kind in ("live", "ready")
        }
        self.busy = 0  # requests submitted to the `threads` pool and not finished
        self.progress = time.monotonic()  # when that pool last had a free thread or finished
        super().init_process()

    def run(self):
        try:
            super().run()
        finally:
            for pool in self.probe_pools.values():
                pool.shutdown(wait=False)

    def wedged(self) -> bool:
        """Every request thread busy and none finished for `timeout` seconds."""
        return self.busy >= self.cfg.threads and time.monotonic() - self.progress > self.cfg.timeout

    def enqueue_req(self, conn: gthread.TConn):
        """Main thread: read what has arrived of the head, then give the connection to the
        thread that serves it (or park it in the poller until more arrives)."""
        if self.cfg.is_ssl or (conn.parser is not None and conn.parser.unreader.buf.getvalue()):
            return self.submit(conn, None)  # TLS in gunicorn, or bytes read ahead already
        complete = _read_head(conn)
        if complete is None:
            conn.sock.setblocking(False)
            conn.timeout = time.monotonic() + self.cfg.keepalive
            self.pending_conns.append(conn)
            self.poller.register(
                conn.sock,
                selectors.EVENT_READ,
                partial(self.on_pending_socket_readable, conn),
            )
            return None
        if not complete:
            self.nr_conns -= 1
            conn.close()
            return None
        kind = probe_of(bytes(conn.head))
        if kind == "live" and self.wedged():
            kind = None
        return self.submit(conn, kind)

    def submit(self, conn: gthread.TConn, probe: str | None) -> None:
        if probe is None:
            if self.busy < self.cfg.threads:
                self.progress = time.monotonic()
            self.busy += 1
        conn.in_request_pool = probe is None
        pool = self.tpool if probe is None else self.probe_pools[probe]
        future = pool.submit(self.handle, conn)
        future.add_done_callback(
            lambda done: self.method_queue.defer(self.finish_request, conn, done)
        )

    def finish_request(self, conn: gthread.TConn, fs):
        if getattr(conn, "in_request_pool", False):
            conn.in_request_pool = False
            self.busy -= 1
            self.progress = time.monotonic()
        return super().finish_request(conn, fs)

    def handle(self, conn: gthread.TConn):
        head = getattr(conn, "head", None)
        if head is None:
            return super().handle(conn)  # TLS in gunicorn, or bytes read ahead already
        head, conn.head = bytes(head), None
        conn.data_ready = True
        conn.init()
        if getattr(conn, "is_http2", False):
            return False  # HTTP/2 is not offered by this configuration
        conn.parser.unreader.unread(head)
        conn.sock.setblocking(True)
        return super().handle(conn)

    def load_wsgi(self):
        super().load_wsgi()
        if getattr(self, "wsgi", None) is not None:
            self.wsgi = close_when_body_unread(self.wsgi)

    def handle_request(self, req, conn):
        conn.served = getattr(conn, "served", 0) + 1
        if conn.served >= KEEPALIVE_REQUESTS:
            req.must_close = True  # the response says `Connection: close`
        _serving.req = req
        try:
            return super().handle_request(req, conn)
        finally:
            _serving.req = None
