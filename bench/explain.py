"""Where a list request's time goes in PostgreSQL: EXPLAIN (ANALYZE, BUFFERS) of every query the
plain SQL path (`startups.selectors.startup_page`) sends for the bench's varied requests, and
the time the rank index path takes for the same page (issue 19's "measure first").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/openstartup_bench_1000000 \\
        .venv/bin/python manage.py shell -c "from bench.explain import main; main()"
"""

import re
import time

from django.db import connection
from django.test.utils import CaptureQueriesContext

from core import readcache
from startups import pagecache, rankindex, selectors
from startups.selectors import After, StartupFilters, after_of, startup_list

CASES = [
    ("minMrr=1 (default sort)", StartupFilters(min_mrr=1), 0),
    ("minMrr=2000&page=100", StartupFilters(min_mrr=2000), 990),
    ("minMrr=50000", StartupFilters(min_mrr=50000), 0),
    ("sort=mrr-asc&minMrr=300&page=100", StartupFilters(min_mrr=300, sort="mrr-asc"), 990),
    ("sort=name-asc&minMrr=300&page=100", StartupFilters(min_mrr=300, sort="name-asc"), 990),
    ("sort=name-desc&minMrr=30000", StartupFilters(min_mrr=30000, sort="name-desc"), 0),
    ("sort=growth-desc&minMrr=300", StartupFilters(min_mrr=300, sort="growth-desc"), 0),
    ("sort=updated-desc&minMrr=300", StartupFilters(min_mrr=300, sort="updated-desc"), 0),
    ("q=cloud&page=50", StartupFilters(q="cloud"), 490),
    ("q=tools", StartupFilters(q="tools"), 0),
    ("category=Marketing&page=100", StartupFilters(category="Marketing"), 990),
]


def _summary(plan: list[str]) -> str:
    top = next(line.strip() for line in plan if "->" in line or line.strip())
    top = re.sub(r"\s+\(cost=[^)]*\)", "", top)
    execution = next(line for line in plan if line.startswith("Execution Time"))
    return f"{execution.split(':')[1].strip():>12}  {top[:110]}"


def explain(sql: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        return [row[0] for row in cursor.fetchall()]


def main() -> None:
    started = time.perf_counter()
    index = rankindex.build(db="default")
    print(f"rank index built in {time.perf_counter() - started:.2f} s ({len(index.ids):,} ids)")
    token = readcache.current("data")
    deep = list(startup_list(filters=StartupFilters())[49_990:50_000])[-1]
    cases = [*CASES, ("cursor at row 50,000", StartupFilters(), after_of(deep, "mrr-desc"))]
    for label, filters, where in cases:
        after = where if isinstance(where, After) else None
        offset = 0 if after else where
        with CaptureQueriesContext(connection) as queries:
            t = time.perf_counter()
            selectors.startup_page(filters=filters, offset=offset, limit=10, after=after)
            sql_ms = (time.perf_counter() - t) * 1000
        page = None
        with CaptureQueriesContext(connection) as index_queries:
            t = time.perf_counter()
            if rankindex.answers(filters):
                readcache.clear_local()  # the rows too, as for a page no copy holds
                page = pagecache._page_from_index(
                    index, token, filters=filters, offset=offset, limit=10, after=after
                )
            index_ms = (time.perf_counter() - t) * 1000
        via = f"{index_ms:.1f} ms" if page is not None else "(SQL path)"
        print(f"\n## {label}: SQL path {sql_ms:.1f} ms, rank index path {via}")
        for query in queries.captured_queries:
            print("  SQL   " + _summary(explain(query["sql"])))
        for query in index_queries.captured_queries if page is not None else []:
            print("  index " + _summary(explain(query["sql"])))
