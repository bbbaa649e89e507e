"""BENCH_PROFILE=1: where a varied row's requests spend their CPU. After a size's recorded runs,
each varied row runs once more (unrecorded: sampling never touches a figure) while py-spy
samples both gunicorn workers (`py-spy record --subprocesses --nonblocking`, 100 samples a
second per process, the threads it judges idle left out); bench/profiles/<size>-<row>[-writes].txt
keeps the functions with the most samples of their own and the most samples in which they are
anywhere on the stack.
"""

import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from sitting import ONLY, PY, ROOT, SECONDS

FOLDER = ROOT / "bench" / "profiles"
RATE = 100  # samples a second, per worker
TOP = 20
# Frames every request passes through (threads, the worker, Django's handler and middleware
# wrappers): on every stack, they say nothing about where the time goes.
PLUMBING = (
    "stdlib/threading.py",
    "stdlib/concurrent/futures/",
    "gunicorn/",
    "core/gunicorn_worker.py",
    "django/core/handlers/",
    "django/utils/deprecation.py",
)
WRITTEN: list[tuple[int, str, str]] = []  # (size, row key, suffix) of this sitting's profiles


def py_spy() -> str:
    beside = Path(PY).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    return found or sys.exit(
        "BENCH_PROFILE=1 needs py-spy (requirements-dev.txt: make install-dev)"
    )


def path(count: int, key: str, suffix: str = "") -> Path:
    return FOLDER / f"{count}-{key}{suffix}.txt"


def record(server: int, run: Callable[[], dict], count: int, row, suffix: str = "") -> Path:
    """Sample gunicorn (master `server` and its workers) while `run` sends the row's load;
    write the summary and return its path."""
    with tempfile.TemporaryDirectory(prefix="openstartup-bench-spy-") as folder:
        raw = Path(folder) / "raw.txt"
        spy = subprocess.Popen(
            [
                py_spy(),
                "record",
                "--pid",
                str(server),
                "--subprocesses",
                "--nonblocking",
                "--format",
                "raw",
                "--nolineno",
                "--full-filenames",
                "--rate",
                str(RATE),
                "--duration",
                str(SECONDS + 1),
                "--output",
                str(raw),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)  # attached to the workers before the load starts
        result = run()
        _, errors = spy.communicate(timeout=SECONDS + 120)
        if spy.returncode != 0 or not raw.exists():
            sys.exit(f"py-spy failed (exit {spy.returncode}):\n{errors}")
        stacks = parse_raw(read_raw(raw))
    title = (
        f"{row.name}{' under writes' if suffix else ''}, {count:,} startups: py-spy, "
        f"{RATE} samples/s per worker over one unrecorded {SECONDS} s wrk run "
        f"({result['rps']:.0f} req/s, {result['requests']:,} requests)"
    )
    FOLDER.mkdir(exist_ok=True)
    if not WRITTEN and not ONLY:  # a full sitting: no profile of an earlier one stays beside
        for old in FOLDER.glob("*.txt"):
            old.unlink()
    out = path(count, row.key, suffix)
    out.write_text(summarise(stacks, title))
    WRITTEN.append((count, row.key, suffix))
    print(f"   {out.relative_to(ROOT)}", flush=True)
    return out


def read_raw(raw: Path) -> str:
    """py-spy's raw output as text: a frame name it read while the process was changing it can
    hold bytes that are not UTF-8 (seen at 100,000 startups, row 4b): replaced, not fatal."""
    return raw.read_bytes().decode("utf-8", errors="replace")


def parse_raw(text: str) -> Counter:
    """py-spy's raw (collapsed) output, `frame;frame;... count` a line, as {stack: samples};
    a stack is a tuple of readable frames, outermost first, without the process frames."""
    stacks: Counter = Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = tuple(label(f) for f in stack.split(";") if not f.startswith("process "))
        stacks[frames] += int(count)
    return stacks


def label(frame: str) -> str:
    """`function (/full/path.py)` as `function (app/module.py)`: the project's files from its
    root, a library's from its site-packages, the standard library's as stdlib/..."""
    function, _, where = frame.partition(" (")
    where = where.rstrip(")")
    root = f"{ROOT}/"
    if "/site-packages/" in where:
        where = where.split("/site-packages/", 1)[1]
    elif where.startswith(root):
        where = where[len(root) :]
    elif "/lib/python" in where:
        where = "stdlib/" + where.split("/lib/python", 1)[1].partition("/")[2]
    return f"{function} ({where})" if where else function


def _file(frame: str) -> str:
    return frame.rpartition(" (")[2].rstrip(")")


def _plumbing(frame: str) -> bool:
    return _file(frame).startswith(PLUMBING)


def summarise(stacks: Counter, title: str) -> str:
    """The top TOP functions by own samples and by cumulative samples (plumbing left out),
    and the own samples by area (the project's apps, each library, the standard library)."""
    total = sum(stacks.values())
    own: Counter = Counter()
    cumulative: Counter = Counter()
    through: Counter = Counter()  # samples in which a frame only hands over to plumbing
    areas: Counter = Counter()
    for frames, samples in stacks.items():
        if not frames:
            continue
        own[frames[-1]] += samples
        areas[area(_file(frames[-1]))] += samples
        for frame in set(frames):
            if not _plumbing(frame):
                cumulative[frame] += samples
        for frame, child in zip(frames, frames[1:], strict=False):
            if _plumbing(child):
                through[frame] += samples
    # A middleware's __call__ that hands (nearly) every sample on to the next wrapper is
    # plumbing too; one that does work of its own stays.
    for frame in [f for f, n in cumulative.items() if through[f] >= 0.95 * n]:
        del cumulative[frame]

    def top(counter: Counter) -> list[str]:
        return [
            f"{samples:7d} {samples / total:6.1%}  {frame}"
            for frame, samples in counter.most_common(TOP)
        ]

    return "\n".join(
        [
            title,
            f"{total:,} samples of threads py-spy judged not idle: on a CPU, waiting for one, "
            "or in a call it could not tell from work (psycopg's `wait` for the server's "
            "answer, a socket `write`).",
            "",
            f"Own samples by area ({len(areas)} areas):",
            *top(areas),
            "",
            f"Top {TOP} functions by own samples:",
            *top(own),
            "",
            f"Top {TOP} functions by cumulative samples (anywhere on the stack; the worker, "
            "threads, Django's handler and the middleware that only hand on left out):",
            *top(cumulative),
            "",
        ]
    )


def area(file: str) -> str:
    """The project's app, the library, or `stdlib` a frame's (labelled) file belongs to."""
    first = file.split("/", 1)[0]
    if first.startswith("<frozen"):
        return "stdlib"
    if not first or first.startswith("<"):
        return "other"
    return f"project: {first}" if (ROOT / first).is_dir() else first


def link(count: int, suffix: str, key: str) -> str:
    """A Markdown link (from bench/results.md) to a row's profile of this sitting, or ""."""
    if (count, key, suffix) not in WRITTEN:
        return ""
    return f"[profile]({path(count, key, suffix).relative_to(FOLDER.parent)})"


def references() -> list[str]:
    """The section of results.md that points at this sitting's profiles, a line per size."""
    if not WRITTEN:
        return []
    lines = [
        "",
        "## Profiles (BENCH_PROFILE=1, this sitting)",
        "",
        "Each varied row once more after its size's recorded runs (so sampling changed no "
        f"figure above), py-spy sampling both workers at {RATE}/s each: top {TOP} functions by "
        "own and by cumulative samples, and own samples by area; a missed target links its "
        "row's profile.",
        "",
    ]
    for count in dict.fromkeys(c for c, _, _ in WRITTEN):
        keys = dict.fromkeys(k for c, k, _ in WRITTEN if c == count)
        cells = [
            f"{key} [without]({path(count, key).relative_to(FOLDER.parent)})"
            + (
                f", [under writes]({path(count, key, '-writes').relative_to(FOLDER.parent)})"
                if (count, key, "-writes") in WRITTEN
                else ""
            )
            for key in keys
        ]
        lines.append(f"- {count:,}: " + "; ".join(cells) + ".")
    return lines
