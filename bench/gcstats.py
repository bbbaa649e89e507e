"""What the garbage collector cost each gunicorn worker during a `make bench` size.

bench/run.py starts the server with BENCH_GC_STATS=<folder>; gunicorn.conf.py's
`post_worker_init` then calls `install`, which times every collection (`gc.callbacks`) and
writes the worker's running totals to <folder>/<pid>.json at most every 2 seconds (and at
exit). `totals` adds the workers up for results.md. Without BENCH_GC_STATS nothing is
installed: the service never pays for this.
"""

import atexit
import gc
import json
import os
import time
from pathlib import Path

WRITE_EVERY_SECONDS = 2.0


def install(folder: str) -> None:
    """Time this process's collections from now on (see the module's docstring)."""
    state = {"collections": [0, 0, 0], "ms": [0.0, 0.0, 0.0], "longest_ms": 0.0}
    path = Path(folder) / f"{os.getpid()}.json"
    started = written = 0.0

    def write() -> None:
        path.write_text(json.dumps(state))

    def callback(phase: str, info: dict) -> None:
        nonlocal started, written
        if phase == "start":
            started = time.perf_counter()
            return
        took = (time.perf_counter() - started) * 1000
        generation = info["generation"]
        state["collections"][generation] += 1
        state["ms"][generation] += took
        state["longest_ms"] = max(state["longest_ms"], took)
        if time.monotonic() - written > WRITE_EVERY_SECONDS:
            written = time.monotonic()
            write()

    gc.callbacks.append(callback)
    atexit.register(write)


def totals(folder: str) -> dict:
    """Every worker's collections added up: per generation, the milliseconds, the longest."""
    found = {"collections": [0, 0, 0], "ms": [0.0, 0.0, 0.0], "longest_ms": 0.0}
    for path in Path(folder).glob("*.json"):
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):  # being written at this moment: the next read has it
            continue
        for generation in range(3):
            found["collections"][generation] += state["collections"][generation]
            found["ms"][generation] += state["ms"][generation]
        found["longest_ms"] = max(found["longest_ms"], state["longest_ms"])
    return found


def describe(found: dict) -> str:
    """One line for results.md."""
    counts = "/".join(str(n) for n in found["collections"])
    spent = "/".join(f"{ms / 1000:.1f}" for ms in found["ms"])
    return (
        f"garbage collector over the whole run, both workers: {counts} collections of "
        f"generations 0/1/2, {spent} s, the longest {found['longest_ms']:.0f} ms"
    )
