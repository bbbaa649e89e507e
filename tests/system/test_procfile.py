"""`make run` runs the Procfile with honcho: the web server, the refresh worker and the webhook
delivery process start together, and one Ctrl-C (SIGINT to the process group) stops them all."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_procfile_runs_the_web_server_the_refresh_worker_and_webhook_delivery():
    processes = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
    )
    assert set(processes) == {"web", "worker", "webhook"}
    assert processes["web"].split()[:2] == ["gunicorn", "openstartup.wsgi"]
    assert "manage.py sync_revenue --all --loop" in processes["worker"]
    assert "manage.py deliver_webhooks --loop" in processes["webhook"]
    assert "honcho start" in (ROOT / "Makefile").read_text()


def test_honcho_starts_every_process_and_one_ctrl_c_stops_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORT")}
    env.update(
        SQLITE_PATH=str(tmp_path / "run.sqlite3"),
        WEB_CONCURRENCY="1",
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
    )
    subprocess.run(
        [str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    port = free_port()
    log = tmp_path / "honcho.log"
    with log.open("wb") as out:
        honcho = subprocess.Popen(
            [str(BIN / "honcho"), "start", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal gives it
        )
    try:
        status = None
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:  # noqa: S310 - loopback
                    status = r.status
                    break
            except OSError:
                time.sleep(0.1)
        assert status == 200
        pattern = r"(web|worker|webhook)\.1 started \(pid=(\d+)\)"
        started = dict(re.findall(pattern, log.read_text()))
        assert set(started) == {"web", "worker", "webhook"}
        worker = int(started["worker"])
        os.kill(worker, 0)  # the refresh worker is running
        os.kill(int(started["webhook"]), 0)  # and the webhook delivery process

        os.killpg(honcho.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        honcho.wait(timeout=40)
        for pid in map(int, started.values()):
            for _ in range(50):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError(f"process {pid} outlived Ctrl-C")
    finally:
        if honcho.poll() is None:
            os.killpg(honcho.pid, signal.SIGKILL)
            honcho.wait()
