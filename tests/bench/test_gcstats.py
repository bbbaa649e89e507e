"""bench/gcstats.py: the garbage collections a worker made, as results.md reports them."""

import subprocess
import sys
from pathlib import Path

from bench import gcstats

ROOT = Path(__file__).resolve().parent.parent.parent

# A process that installs the watch, makes 2,000 reference cycles and collects twice (one
# full collection asked for by name, the rest as the collector sees fit).
WORKER = """
import gc, sys
from bench.gcstats import install
install(sys.argv[1])
class Node:
    pass
for _ in range(2000):
    a, b = Node(), Node()
    a.other, b.other = b, a
gc.collect()
gc.collect(0)
"""


def test_a_workers_collections_are_counted_and_timed(tmp_path):
    for _ in range(2):  # two workers
        subprocess.run([sys.executable, "-c", WORKER, str(tmp_path)], cwd=ROOT, check=True)
    found = gcstats.totals(str(tmp_path))
    assert found["collections"][2] >= 2  # one gc.collect() each
    assert found["collections"][0] >= 2
    assert all(ms >= 0 for ms in found["ms"]) and found["ms"][2] > 0
    assert 0 < found["longest_ms"] <= sum(found["ms"])
    line = gcstats.describe(found)
    assert line.startswith("garbage collector over the whole run, both workers: ")
    assert f"/{found['collections'][2]} collections" in line


def test_a_file_being_written_is_skipped(tmp_path):
    (tmp_path / "1.json").write_text('{"collections": [1, 0, 0], "ms": [0.5, 0, 0], "longes')
    (tmp_path / "2.json").write_text(
        '{"collections": [3, 1, 1], "ms": [1.0, 2.0, 3.0], "longest_ms": 3.0}'
    )
    assert gcstats.totals(str(tmp_path)) == {
        "collections": [3, 1, 1],
        "ms": [1.0, 2.0, 3.0],
        "longest_ms": 3.0,
    }
