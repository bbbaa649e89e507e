"""Every code sample of the API guide (/docs/guide/) runs as printed.

The guide is fetched from a live server holding the demo data (`seed_demo`), each `<pre>` block
is taken verbatim (HTML unescaped) and run: shell (curl) with bash, Python with this venv's
interpreter (httpx, PyJWT and the official client of this checkout), JavaScript with node, and
the MCP client configurations are parsed and checked to point at the server. Samples read the key
from `$OPENSTARTUP_API_KEY`, as the guide says to export it: a Free key, or a Pro key for the
samples that need one (the export); a printed placeholder key would be replaced by the same.
A block of no known kind fails the test, so a new sample cannot go unrun.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.support.factories import make_account, make_api_key, make_subscription

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER_KEY = "osk_..."


def guide_samples(base_url: str) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/docs/guide/", timeout=30) as answer:  # noqa: S310
        page = answer.read().decode()
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", page, re.DOTALL)
    return [html.unescape(re.sub(r"</?code[^>]*>", "", block)) for block in blocks]


def kind_of(sample: str) -> str:
    text = sample.strip()
    if text.startswith("{"):
        return "json"
    if text.startswith("curl ") or "\ncurl " in text:
        return "shell"
    if "await fetch(" in text or "console.log(" in text:
        return "javascript"
    if re.search(r"^(import|from) \w", text, re.MULTILINE):
        return "python"
    return "unknown"


def run(argv: list[str], work: Path, key: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env["OPENSTARTUP_API_KEY"] = key
    env["PYTHONPATH"] = str(ROOT / "clients" / "python" / "src")  # the official client
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120)


def check_json_lines(stdout: str) -> list[str]:
    """Problems with the JSON answers a shell sample printed (one per curl)."""
    problems = []
    for raw in stdout.splitlines():
        body = json.loads(raw)
        if "error" in body:
            problems.append(f"error answer: {body['error']}")
        elif body.get("meta", {}).get("warnings"):
            problems.append(f"ignored parameters: {body['meta']['warnings']}")
        elif not body.get("data"):
            problems.append("no data")
    return problems


@pytest.fixture
def demo(transactional_db) -> dict[str, str]:
    """The demo dataset, a Free key and a Pro key."""
    call_command("seed_demo", verbosity=0)
    free = make_account(email="free@example.com")
    pro = make_account(email="pro@example.com")
    make_subscription(account=pro, days=1)
    return {"free": make_api_key(account=free)[1], "pro": make_api_key(account=pro)[1]}


def test_every_guide_sample_runs_as_printed_against_the_demo_data(live_server, demo, tmp_path):
    for program in ("curl", "node"):
        assert shutil.which(program), f"{program} is missing: the guide's samples need it"
    samples = guide_samples(live_server.url)
    kinds = [kind_of(sample) for sample in samples]
    assert "unknown" not in kinds, [
        s for s, k in zip(samples, kinds, strict=True) if k == "unknown"
    ]
    assert kinds.count("shell") >= 4 and kinds.count("python") >= 3
    assert kinds.count("javascript") >= 1 and kinds.count("json") >= 3
    problems = []
    for number, (sample, kind) in enumerate(zip(samples, kinds, strict=True)):
        work = tmp_path / f"sample{number}"
        work.mkdir()
        needs_pro = "/exports/" in sample
        key = demo["pro" if needs_pro else "free"]
        code = sample.replace(PLACEHOLDER_KEY, key)
        where = f"sample {number} ({kind}):\n{sample}\n"
        if kind == "json":
            config = json.dumps(json.loads(code))
            if f"{live_server.url}/api/mcp" not in config:
                problems.append(where + "does not point at this server's /api/mcp")
            continue
        if kind == "python" and "attestation.jws" in code:
            prepare_attestation(live_server.url, work)
        if kind == "shell":
            done = run(["bash", "-euo", "pipefail", "-c", code], work, key)
        elif kind == "python":
            done = run([sys.executable, "-c", code], work, key)
        else:
            (work / "sample.mjs").write_text(code)
            done = run(["node", "sample.mjs"], work, key)
        if done.returncode != 0:
            problems.append(where + f"exit {done.returncode}: {done.stderr[-2000:]}")
            continue
        if not done.stdout.strip() and not list(work.glob("*.ndjson")):
            problems.append(where + "printed nothing")
        if kind == "shell":
            try:
                problems += [where + problem for problem in check_json_lines(done.stdout)]
            except ValueError:
                problems.append(where + f"printed something that is not JSON: {done.stdout[:300]}")
            for export in work.glob("*.ndjson"):
                lines = [json.loads(line) for line in export.read_text().splitlines()]
                if not lines or lines[-1] != {"meta": {"count": len(lines) - 1}}:
                    problems.append(where + f"export without its count line: {lines[-1:]}")
                elif len(lines) < 2:
                    problems.append(where + "the export is empty in the demo data")
            if (work / "page1.json").exists():
                first = {
                    item["slug"] for item in json.loads((work / "page1.json").read_text())["data"]
                }
                second = {item["slug"] for item in json.loads(done.stdout)["data"]}
                if first & second:
                    problems.append(where + "the cursor's page repeats the first page")
    assert not problems, "\n\n".join(problems)


def prepare_attestation(base_url: str, work: Path) -> None:
    """What the guide says to save first: a verified startup's `data.jws` and the JWKS."""
    query = f"{base_url}/api/v1/startups?verified=true&limit=1"
    with urllib.request.urlopen(query, timeout=30) as answer:  # noqa: S310
        slug = json.load(answer)["data"][0]["slug"]
    url = f"{base_url}/api/v1/startups/{slug}/attestation"
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310
        (work / "attestation.jws").write_text(json.load(answer)["data"]["jws"])
    with urllib.request.urlopen(f"{base_url}/.well-known/jwks.json", timeout=30) as answer:  # noqa: S310
        (work / "jwks.json").write_bytes(answer.read())
