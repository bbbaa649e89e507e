"""Demo: deterministic, invented figures for the demo dataset. No network, never real.

The demo seed (demo/seed.py) connects its "verified" startups to this provider and syncs
them through the same path as real connections, so the figures are stored, snapshotted, signed
and shown exactly like real ones, but always under the provider name `demo`: the API never
presents them as coming from a real payment provider. Refused in production mode.

The "key" holds the whole recipe, `demo:<seed>:<level>:<start YYYY-MM-DD>:<plateau YYYY-MM-DD>:
<kind>`: a growth curve from a fraction of `level` (US dollars a month) at `start` up to `level`
at `plateau`, flat with weekly noise afterwards. `kind` is `subscriptions` (MRR = the curve) or
`sales` (one-off sales: no subscription data, MRR null).
"""

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from django.conf import settings

from verification.http import ProviderError, ProviderHttp
from verification.providers.base import Ledger, Provider, ProviderFigures

NAME = "demo"
SUBSCRIPTIONS, SALES = "subscriptions", "sales"
DAYS_PER_MONTH = 30.4375
WEEK = timedelta(days=7)
BAD_KEY = "not a demo key (demo:<seed>:<level>:<start>:<plateau>:<kind>)"


@dataclass(frozen=True)
class Recipe:
    seed: int
    level: int
    start: date
    plateau: date
    kind: str

    def key(self) -> str:
        return f"{NAME}:{self.seed}:{self.level}:{self.start}:{self.plateau}:{self.kind}"


def parse_key(key: str) -> Recipe:
    try:
        name, seed, level, start, plateau, kind = key.split(":")
        recipe = Recipe(
            seed=int(seed),
            level=int(level),
            start=date.fromisoformat(start),
            plateau=date.fromisoformat(plateau),
            kind=kind,
        )
    except ValueError:
        raise ProviderError(
            "not a demo key (demo:<seed>:<level>:<start>:<plateau>:<kind>)"
        ) from None
    if name != NAME or recipe.kind not in {SUBSCRIPTIONS, SALES} or recipe.level < 1:
        raise ProviderError(BAD_KEY)
    return recipe


def _noise(seed: int, step: int) -> float:
    """A deterministic number in [0, 1) for (seed, step): cheap integer hashing, no RNG state."""
    value = (seed * 0x9E3779B1 + step * 0x85EBCA6B + 0x27D4EB2F) & 0xFFFFFFFF
    value = ((value ^ (value >> 15)) * 0x2C1B3C6D) & 0xFFFFFFFF
    value = ((value ^ (value >> 12)) * 0x297A2D39) & 0xFFFFFFFF
    return (value ^ (value >> 15)) / 2**32


def monthly_level(recipe: Recipe, day: date) -> float:
    """US dollars a month on `day`: the growth curve with ±7% weekly noise."""
    return _curve(recipe)(day)


def _curve(recipe: Recipe):
    """`monthly_level` of one recipe, its constant parts worked out once (a seed of 1,000,000
    startups evaluates some 6,000,000 days)."""
    start, level, seed = recipe.start, recipe.level, recipe.seed
    span = max(1, (recipe.plateau - start).days)
    floor = level * (0.15 + 0.5 * _noise(seed, -1))

    def at(day: date) -> float:
        days = (day - start).days
        progress = min(1.0, max(0.0, days / span))
        return (floor + (level - floor) * progress) * (0.93 + 0.14 * _noise(seed, days // 7))

    return at


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    """Nothing to fetch: the recipe is the key. Never available in production mode."""
    if settings.PRODUCTION:
        raise ProviderError("the demo provider is not available in production mode")
    return {"recipe": parse_key(http.secret)}


@lru_cache(maxsize=2)
def _weeks(recipe: Recipe, today: date) -> list[tuple[datetime, int, int]]:
    """One sale a week (a week of the curve) up to `today`, in cents, and its refund (a small
    one, some weeks, two days later). The last two answers are kept: a sync's `compute` and
    the seed's `daily_history` of the days before it ask for the same weeks."""
    level = _curve(recipe)
    weeks, day, week = [], recipe.start, 0
    while day <= today:
        cents = int(level(day) * 7 / DAYS_PER_MONTH * 100)
        refund = cents // 30 if _noise(recipe.seed, 10_000 + week) < 0.1 else 0
        weeks.append((datetime(day.year, day.month, day.day, 12, tzinfo=UTC), cents, refund))
        day += WEEK
        week += 1
    return weeks


def _customers(recipe: Recipe, *, mrr_dollars: float, sold_cents: int) -> int:
    arpu = 9 + int(40 * _noise(recipe.seed, -2))
    if recipe.kind == SALES:
        return max(1, sold_cents // 100 // (arpu * 3))
    return max(1, int(mrr_dollars) // arpu)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    recipe: Recipe = raw["recipe"]
    ledger = Ledger(now=now)
    today = now.astimezone(UTC).date()
    sold = 0
    for at, cents, refund in _weeks(recipe, today):
        ledger.sale(at=at, currency="USD", minor=cents)
        sold += cents
        if refund:
            ledger.refund(at=at + timedelta(days=2), currency="USD", minor=refund)
    level = monthly_level(recipe, today)
    customers = _customers(recipe, mrr_dollars=level, sold_cents=sold)
    mrr = None if recipe.kind == SALES else {"USD": Decimal(int(level * 100))}
    return ledger.figures(mrr=mrr, customers=customers)


def daily_history(recipe: Recipe, days: list[date]) -> list[dict]:
    """What a daily sync would have recorded at the end of each of `days` (whole dollars),
    from running totals instead of a ledger per day: the seed's earlier snapshots."""
    last = max(days)
    # The weeks up to the day after (a sync's own weeks, usually just computed), but that day's.
    weeks = [week for week in _weeks(recipe, last + timedelta(days=1)) if week[0].date() <= last]
    # Money events in time order: +sale, -refund (two days after its sale).
    events = sorted(
        [(at, cents) for at, cents, _ in weeks]
        + [(at + timedelta(days=2), -refund) for at, _, refund in weeks if refund]
    )
    moments = [at for at, _ in events]
    net, sold = [0], [0]  # running totals after each event
    for _, cents in events:
        net.append(net[-1] + cents)
        sold.append(sold[-1] + max(cents, 0))
    history, level = [], _curve(recipe)
    for day in days:
        end = datetime(day.year, day.month, day.day, 23, 59, tzinfo=UTC)
        upto = bisect_right(moments, end)
        since = bisect_left(moments, end - timedelta(days=30))
        dollars = level(day)
        mrr = None if recipe.kind == SALES else int(dollars)
        history.append(
            {
                "date": day,
                "mrr": mrr,
                "arr": None if mrr is None else mrr * 12,
                "customers": _customers(recipe, mrr_dollars=dollars, sold_cents=sold[upto]),
                "last_30_days": max(0, round((net[upto] - net[since]) / 100)),
                "total_revenue": max(0, round(net[upto] / 100)),
            }
        )
    return history


PROVIDER = Provider(
    name=NAME,
    default_api_base="https://demo.invalid",
    auth_headers=lambda key: {},
    fetch=fetch,
    compute=compute,
)
