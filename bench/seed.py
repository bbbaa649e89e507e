"""The benchmark's load: `seed_demo`'s own loader (demo/bulk.py), so `make bench` measures
the very dataset an operator's `seed_demo --count N` writes.

    .venv/bin/python manage.py shell -c "from bench.seed import seed; print(seed(100000))"
"""

from demo.seed import refresh_planner_statistics, seed_demo


def seed(count: int) -> int:
    loaded = seed_demo(count)
    refresh_planner_statistics()
    return loaded
