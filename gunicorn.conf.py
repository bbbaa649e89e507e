"""gunicorn settings for production (`gunicorn openstartup.wsgi`, run from the project root).

Every knob comes from the environment; see README's configuration table. The trusted-proxy list
is the application's own TRUSTED_PROXIES, so gunicorn believes X-Forwarded-Proto from exactly
the peers whose X-Forwarded-For the quota code believes.
"""

import ctypes
import gc
import ipaddress
import multiprocessing
import os

from openstartup.settings import TRUSTED_PROXIES, env_int

bind = os.environ.get("GUNICORN_BIND") or f"127.0.0.1:{env_int('PORT', 8000)}"

# Requests are short and mostly wait on PostgreSQL: 2 x cores + 1 workers, capped so a large
# machine does not open more database connections than the pool allows.
workers = env_int("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 12))
# The threaded worker, always: a connection that has not sent its request yet waits in the
# worker's poller, not in a thread, so slow or half-open clients cannot take every worker (the
# sync worker gives each connection a whole process until it is done). One database connection
# per thread. Request bodies are still read by a thread: the proxy in front must buffer
# requests (docs/deployment.md). The probes get a thread each besides these (`/healthz` one,
# `/readyz` one), so liveness answers while every request thread waits on a stalled database.
worker_class = "core.gunicorn_worker.ThreadWorker"
threads = env_int("GUNICORN_THREADS", 4)

# A worker silent for `timeout` seconds is killed and replaced; on SIGTERM (deploys, scale-in)
# workers get `graceful_timeout` seconds to finish the requests they hold. Keep `timeout` well
# above DB_REQUEST_DEADLINE_SECONDS (5): a request waiting on a hung database answers 503 at its
# deadline (core/dbdeadline.py) long before gunicorn would kill the worker and drop it.
timeout = env_int("GUNICORN_TIMEOUT", 30)
graceful_timeout = env_int("GUNICORN_GRACEFUL_TIMEOUT", 30)
# Longer than a typical load balancer's idle timeout is wrong; shorter is safe.
keepalive = env_int("GUNICORN_KEEPALIVE", 5)
# Recycle workers now and then (jitter keeps them from restarting together).
max_requests = env_int("GUNICORN_MAX_REQUESTS", 10000)
max_requests_jitter = max_requests // 10

# X-Forwarded-Proto/-For are honoured only from these peers (empty: from nobody).
forwarded_allow_ips = ",".join(
    str(ipaddress.ip_network(entry, strict=False)) for entry in TRUSTED_PROXIES
)

# Access log to stdout ("-"); GUNICORN_ACCESS_LOG= (empty) turns it off, e.g. for benchmarks.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# The last field is the response's X-Request-Id (the one in error bodies and app logs).
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(L)ss "%(a)s" %({x-request-id}o)s'
# API keys sent in the query string (refused with 400) never reach the access log.
logger_class = "core.accesslog.RedactingLogger"

# Heartbeat files in memory, not on a possibly slow container disk.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108

# Bounded request sizes (gunicorn's largest settings): an unbounded request line let a 16 MB
# line run a worker into its timeout. Longer lines and header fields get gunicorn's own 400/431.
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100

# gunicorn's control socket defaults to one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn),
# so two copies of the service on one machine (two checkouts, tests, CI) would share it and
# the second would take over the first's. The service needs no control socket: off.
control_socket_disable = True


# glibc gives each thread that allocates its own malloc arena (up to 8 per core), and memory
# freed in one arena is not reused by the others: with 4 threads a worker's RSS grows well past
# what it holds (the rank index, the per-process copies). Two arenas, as the glibc tunable
# MALLOC_ARENA_MAX=2 would do, set here (in the master, before workers fork) so every way of
# starting the service gets it; an operator's own MALLOC_ARENA_MAX wins. Not glibc: nothing.
M_ARENA_MAX = -8  # glibc's malloc.h
if "MALLOC_ARENA_MAX" not in os.environ:
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError):
        pass


def post_worker_init(worker) -> None:
    """The application is loaded: move everything it allocated so far (Django, the URL
    conf, the serializers: some 120,000 objects) out of the garbage collector's reach, so a
    full collection walks only what requests leave behind (the copies kept per process)."""
    gc.freeze()
    if os.environ.get("BENCH_GC_STATS"):  # `make bench` only: what collections cost
        from bench.gcstats import install

        install(os.environ["BENCH_GC_STATS"])


def when_ready(server) -> None:
    """Say where to click once the service is up (`make run` shows this in the terminal)."""
    for address in server.cfg.address:
        if not isinstance(address, tuple):  # a unix socket: nothing to open in a browser
            continue
        host, port = address
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host  # noqa: S104
        base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        server.log.info(
            "OpenStartup is up. Open %s/ (start here), %s/startups/ (the data), "
            "%s/accounts/signup/ (an API key), %s/docs/guide/ (the guide), %s/admin/ (operators)",
            base,
            base,
            base,
            base,
            base,
        )
