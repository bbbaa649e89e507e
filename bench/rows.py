"""The rows of `make bench`: what each one requests, and the value pools of the varied ones
(bench/varied.lua reads them)."""

from dataclasses import dataclass, field


@dataclass
class Row:
    key: str
    label: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    script: str | None = None
    args: tuple[str, ...] = ()
    kind: str = "repeated"  # or "varied"
    list_row: bool = False  # a varied list row: the targets of issue 19 apply

    @property
    def name(self) -> str:
        return f"{self.key} {self.label}"


POOLS = """
import random, urllib.parse
from django.db import connection
from demo import seed as demo
from startups.selectors import StartupFilters, after_of, encode_cursor, startup_list
with connection.cursor() as cursor:
    cursor.execute("SELECT slug FROM startups_startup WHERE is_published ORDER BY id")
    slugs = [row[0] for row in cursor.fetchall()]
rng = random.Random(19)
with open(folder + "/slugs.txt", "w") as f:
    f.write("\\n".join(rng.sample(slugs, min(size, len(slugs)))))
words = {w.lower() for w in demo.PREFIXES + demo.SUFFIXES}
words |= {w.lower() for c, _ in demo.CATEGORIES for w in c.split() if w.isalpha()}
with open(folder + "/words.txt", "w") as f:
    f.write("\\n".join(sorted(words)))
with open(folder + "/categories.txt", "w") as f:
    f.write("\\n".join(urllib.parse.quote(c) for c, _ in demo.CATEGORIES))
qs = startup_list(filters=StartupFilters())
for name, start in (("shallow", 0), ("deep", 49_000)):
    rows = qs[start : start + size // 10]
    with open(folder + f"/cursors-{name}.txt", "w") as f:
        f.write("\\n".join(encode_cursor(after_of(s, "mrr-desc")) for s in rows))
"""


def rows_for(pro_h: dict, free_h: dict, top: str, pools: str) -> list[Row]:
    def varied(key, label, mode, base="-", vary="minMrr,page", pool="-", headers=None, path=""):
        return Row(
            key,
            label,
            path or ("/api/v1/startups" if mode in ("list", "cursor") else "/api/v1/startups/"),
            headers if headers is not None else pro_h,
            "varied.lua",
            (mode, base, vary, f"{pools}/{pool}" if pool != "-" else "-"),
            "varied",
            mode in ("list", "cursor"),
        )

    return [
        Row("1", "bare Django view (4 KB JSON)", "/bench/bare"),
        Row("2", "minimal ORM list (no auth/quota/rank)", "/bench/minimal"),
        varied(
            "2d",
            "varied minimal ORM detail (slug; same joins, dicts, JsonResponse)",
            "detail",
            vary="-",
            pool="slugs.txt",
            path="/bench/minimal-detail/",
        ),
        Row("3a", "list, default sort, Pro key", "/api/v1/startups", pro_h),
        Row("3b", "list, default sort, Free key", "/api/v1/startups", free_h),
        Row("3c", "list, q=forge", "/api/v1/startups?q=forge", pro_h),
        Row(
            "3d",
            "list, category=developer&minMrr=1000",
            "/api/v1/startups?category=developer&minMrr=1000",
            pro_h,
        ),
        Row("3e", "list, sort=name-asc&page=500", "/api/v1/startups?sort=name-asc&page=500", pro_h),
        Row("3f", "detail", f"/api/v1/startups/{top}", pro_h),
        Row("3g", "/api/ai/discovery (cached)", "/api/ai/discovery"),
        Row("3h", "MCP tools/call search_startups", "/api/mcp", script="mcp.lua"),
        varied("4a", "varied minMrr+page, mrr-desc, Pro", "list"),
        varied("4b", "varied minMrr+page, mrr-desc, Free", "list", headers=free_h),
        varied("4c", "varied minMrr+page, mrr-asc", "list", "sort=mrr-asc"),
        varied("4d", "varied minMrr+page, name-asc", "list", "sort=name-asc"),
        varied("4e", "varied minMrr+page, name-desc", "list", "sort=name-desc"),
        varied("4f", "varied minMrr+page, growth-desc", "list", "sort=growth-desc"),
        varied("4g", "varied minMrr+page, updated-desc", "list", "sort=updated-desc"),
        varied("4h", "varied q+page", "list", vary="q,page", pool="words.txt"),
        varied("4i", "varied category+page", "list", vary="category,page", pool="categories.txt"),
        varied(
            "4j", "varied cursor, pages 1-2,000", "cursor", vary="limit", pool="cursors-shallow.txt"
        ),
        varied(
            "4k",
            "varied cursor, pages ~4,900-6,900",
            "cursor",
            vary="limit",
            pool="cursors-deep.txt",
        ),
        varied("4l", "varied detail (slug)", "detail", vary="-", pool="slugs.txt"),
        varied("4m", "varied history (slug)", "history", vary="-", pool="slugs.txt"),
        varied(
            "4n",
            "varied MCP search_startups (query)",
            "mcp",
            vary="-",
            pool="words.txt",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            path="/api/mcp",
        ),
    ]
