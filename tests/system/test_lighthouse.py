"""Lighthouse (npm `lighthouse` 12.2.3, pinned by package-lock.json, driving
Debian's Chromium) scores at least 95 in performance, accessibility, best practices and SEO for
the landing page, the list, a profile, the guide, the API reference and the signed-in
dashboard, at phone (Lighthouse's default mobile emulation and throttling) and desktop settings.

Self-contained like .ci/schemathesis: a fresh SQLite database in a temp directory with the demo
data, a gunicorn server on a free loopback port, two audits at a time. Missing lighthouse or
Chromium fails the test: a check that skips did not run."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CHROME = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
MINIMUM = 0.95
PAGES = ("/", "/startups/", "/startups/{slug}", "/docs/guide/", "/docs/", "/dashboard/")
PARALLEL = 2

SIGN_IN = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth import get_user_model
from startups.models import Startup
user = get_user_model().objects.create_user(
    username="lighthouse@example.com", email="lighthouse@example.com", password=None)
session = import_module(settings.SESSION_ENGINE).SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
verified = Startup.objects.filter(verification__isnull=False).order_by("-mrr")
slug = verified.values_list("slug", flat=True)[0]
print(session.session_key, slug)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A gunicorn server over the demo data; yields (base URL, session key, a profile slug)."""
    if not LIGHTHOUSE.exists():
        pytest.fail(f"{LIGHTHOUSE} is missing: run `npm ci` (make test does)")
    if not CHROME.exists():
        pytest.fail(f"{CHROME} is missing: run .ci/install-browser (make test runs it)")
    work = tmp_path_factory.mktemp("lighthouse")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        SQLITE_PATH=str(work / "db.sqlite3"),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="WARNING",
        DJANGO_ENV="",
    )
    python = sys.executable

    def manage(*args: str) -> str:
        run = subprocess.run(
            [python, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    manage("migrate", "--noinput", "--verbosity", "0")
    manage("seed_demo", "--count", "200", "--verbosity", "0")
    manage("collectstatic", "--noinput", "--verbosity", "0")
    session, slug = manage("shell", "-c", SIGN_IN).strip().splitlines()[-1].split()
    port = free_port()
    server = subprocess.Popen(
        [python, "-m", "gunicorn", "openstartup.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("gunicorn did not come up")
        cookie = {"sessionid": session}
        for page in PAGES:  # warm: every worker's first answer is not what a visitor gets
            for _ in range(2):
                httpx.get(base + page.format(slug=slug), cookies=cookie, timeout=30)
        yield base, session, slug
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def audit(url: str, preset: str, cookie: str, out: Path) -> dict:
    """One Lighthouse run; its JSON report. A run that reports a runtime error (a trace it
    could not record, e.g. NO_NAVSTART: "Please run Lighthouse again") is run again, up to
    three times in all, each writing a fresh report."""
    argv = [
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
        "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
        f"--extra-headers={json.dumps({'Cookie': f'sessionid={cookie}'})}",
    ]
    if preset == "desktop":
        argv.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": str(CHROME)}
    for _ in range(3):
        out.unlink(missing_ok=True)  # never read an earlier attempt's report
        run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240)
        assert run.returncode == 0 or out.exists(), run.stderr[-2000:]
        report = json.loads(out.read_text())
        if not report.get("runtimeError"):
            return report
    pytest.fail(f"{url} ({preset}): {report['runtimeError']}")


def shortfalls(report: dict) -> list[str]:
    """Each category under the minimum, with the audits that cost it points."""
    found = []
    for name in CATEGORIES:
        category = report["categories"][name]
        if category["score"] is None or category["score"] < MINIMUM:
            lost = [
                f"{ref['id']}={report['audits'][ref['id']]['score']}"
                f" {report['audits'][ref['id']].get('displayValue', '')}".strip()
                for ref in category["auditRefs"]
                if ref["weight"]
                and report["audits"][ref["id"]]["score"] is not None
                and report["audits"][ref["id"]]["score"] < 1
            ]
            found.append(f"{name} {category['score']}: {', '.join(lost)}")
    return found


def test_every_page_scores_at_least_95_on_phone_and_desktop(site, tmp_path):
    base, session, slug = site
    runs = [(page.format(slug=slug), preset) for page in PAGES for preset in ("mobile", "desktop")]

    def one(run: tuple[str, str]) -> tuple[tuple[str, str], dict, Path]:
        path, preset = run
        out = tmp_path / f"{preset}-{path.strip('/').replace('/', '-') or 'home'}.json"
        return run, audit(base + path, preset, session, out), out

    with ThreadPoolExecutor(PARALLEL) as pool:
        first = list(pool.map(one, runs))
    results = []
    for (path, preset), report, out in first:
        found = shortfalls(report)
        if found and all(problem.startswith("performance ") for problem in found):
            # Performance alone varies from run to run (simulated throttling over a CPU the
            # parallel runs share); Lighthouse's own guidance is to judge the median of
            # several runs. Two more, one at a time once the parallel ones are done, so a
            # neighbour's audit is not in their trace. Accessibility, best practices and SEO
            # are judged on the first.
            reports = [report] + [
                audit(base + path, preset, session, out.with_suffix(f".{n}.json")) for n in (2, 3)
            ]
            reports.sort(key=lambda r: r["categories"]["performance"]["score"] or 0)
            found = shortfalls(reports[1])
        results.append((f"{path} ({preset})", found))
    problems = [f"{where}: {problem}" for where, found in results for problem in found]
    keep = os.environ.get("LIGHTHOUSE_REPORT_DIR")
    if keep:
        shutil.copytree(tmp_path, keep, dirs_exist_ok=True)
    assert not problems, "\n".join(problems)
