"""gunicorn settings for production (`gunicorn openstartup.wsgi`, run from the project root).

Every knob comes from the environment; see README's configuration table. The trusted-proxy list
is the application's own TRUSTED_PROXIES, so gunicorn believes X-Forwarded-Proto from exactly
the peers whose X-Forwarded-For the quota code believes.
"""

import ipaddress
import multiprocessing
import os

from openstartup.settings import TRUSTED_PROXIES, env_int

bind = os.environ.get("GUNICORN_BIND") or f"127.0.0.1:{env_int('PORT', 8000)}"

# Requests are short and mostly wait on PostgreSQL: the classic 2 x cores + 1 sync workers,
# capped so a large machine does not open more database connections than the pool allows.
workers = env_int("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 12))
# More than one thread switches to the gthread worker (one database connection per thread).
threads = env_int("GUNICORN_THREADS", 1)

# A worker silent for `timeout` seconds is killed and replaced; on SIGTERM (deploys, scale-in)
# workers get `graceful_timeout` seconds to finish the requests they hold.
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
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(L)ss "%(a)s"'

# Heartbeat files in memory, not on a possibly slow container disk.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108

# The API answers long query strings itself (10 KB and more; Django bounds the parameter count
# with DATA_UPLOAD_MAX_NUMBER_FIELDS), so gunicorn must not cut request lines at its 4 KB default
# with an HTML error. Its only settings are 0 (unlimited) or at most 8190; a proxy in front
# should allow request lines of at least 16 KB.
limit_request_line = 0

# gunicorn's control socket defaults to one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn),
# so two copies of the service on one machine (two checkouts, tests, CI) would share it and
# the second would take over the first's. The service needs no control socket: off.
control_socket_disable = True


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
