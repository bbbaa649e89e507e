"""The hot reads as statements compiled once: the rows of a page's ids, the ids of a page in
an order the rank index does not hold (with the data token), a cursor's own startup, and a
startup's history.

Through the ORM each request built, resolved and compiled the same queryset again (the
correlated sync-time subqueries, `only()`, the sort's expressions) and made model instances
that the page then copied into plain tuples: about 1 ms of CPU a request, the most of what a
page in ascending MRR, by name, growth or change cost more than one in the default order (whose
rows are nearly always kept copies). Here the ORM compiles each statement once per connection
and shape; a request substitutes its values and reads plain rows, with the backend's own
converters applied. Only the values change, never the SQL text, so the answers are those of
`startups.selectors` exactly (tests/startups/test_rankindex.py compares them on random pages).
"""

from collections.abc import Callable
from datetime import date

from django.db import connections
from django.db.models import FilteredRelation, Q, Subquery

from core.models import Generation
from startups.selectors import (
    LIST_COLUMNS,
    StartupFilters,
    published_startups,
    startup_list,
    storable_slug,
    with_synced_at,
)

# Stand-ins the ORM compiles in place of a request's values, found again in the compiled
# parameters (within every integer column's range: the ORM drops a value outside it).
_MARK = 1_987_654_320
_BIGINT = 2**63 - 1
# A slug and two days found again among the compiled parameters (never sent to the database).
_SLUG_MARK = "slug-stand-in-\u00b6"
_DAY_MARKS = (date(1001, 1, 1), date(1002, 2, 2))


class _Compiled:
    """One compiled statement: its SQL, its parameters with the stand-ins' places, the
    result's attribute names and the converters of each column."""

    __slots__ = ("_apply", "converters", "names", "params", "slots", "sql")

    def __init__(self, qs, marks: list[int], *, db: str) -> None:
        compiler = qs.query.get_compiler(using=db)
        self.sql, params = compiler.as_sql()
        self.params = list(params)
        where = {mark: i for i, mark in enumerate(self.params) if mark in marks}
        if len(where) != len(marks):
            raise LookupError("a stand-in value did not reach the parameters")
        self.slots = [where[mark] for mark in marks]
        columns = compiler.select[: compiler.col_count]
        self.names = tuple(alias or expression.target.attname for expression, _, alias in columns)
        self.converters = compiler.get_converters([column[0] for column in columns])
        self._apply = compiler.apply_converters

    def rows(
        self, values: list, *, db: str, suffix: str = "", extra: tuple = (), prepare: bool = False
    ) -> list:
        params = list(self.params)
        for slot, value in zip(self.slots, values, strict=True):
            params[slot] = value
        connection = connections[db]
        # `prepare` on PostgreSQL: bound on the server, so the statement is prepared by its 5th
        # use and planned once per connection (core/postgresql/base.py; its parameters must be
        # plain values of the columns' own types). Only for a statement whose best plan is the
        # same for every value: the rows by primary key, not the walk (whether to walk the
        # order's b-tree or sort the MRR range depends on the bound: a generic plan would fix
        # one for all).
        prepared = getattr(connection, "prepared_cursor", None) if prepare else None
        with (prepared or connection.cursor)() as cursor:
            cursor.execute(self.sql + suffix, [*params, *extra])
            rows = cursor.fetchall()
        if self.converters:
            return [tuple(row) for row in self._apply(rows, self.converters)]
        return rows


def _compiled(db: str, key: tuple, make: Callable[[], _Compiled]) -> _Compiled:
    """The statement `key` compiled for this thread's connection to `db` (a connection's
    converters are its own: each thread compiles its own, once)."""
    connection = connections[db]
    kept = connection.__dict__.setdefault("_openstartup_list_sql", {})
    if (found := kept.get(key)) is None:
        kept[key] = found = make()
    return found


def list_row_values(ids: list[int], *, db: str) -> tuple[tuple, dict[int, tuple]]:
    """The published startups among `ids` as `selectors.list_rows` reads them (list columns
    and sync time), each as a tuple of plain values under the returned attribute names."""
    if not ids:
        return (), {}
    marks = [_MARK + n for n in range(len(ids))]

    def make() -> _Compiled:
        qs = with_synced_at(published_startups(db=db).only(*LIST_COLUMNS)).filter(id__in=marks)
        return _Compiled(qs.order_by(), marks, db=db)

    statement = _compiled(db, ("rows", len(ids)), make)
    place = statement.names.index("id")
    return statement.names, {row[place]: row for row in statement.rows(ids, db=db, prepare=True)}


def compiles(filters: StartupFilters) -> bool:
    """Whether `ordered_ids` takes these filters: MRR bounds only, each within a bigint (the
    ORM decides what an out-of-range bound means: the other path)."""
    plain = StartupFilters(min_mrr=filters.min_mrr, max_mrr=filters.max_mrr, sort=filters.sort)
    bounds = (filters.min_mrr, filters.max_mrr)
    return filters == plain and all(b is None or 0 <= b <= _BIGINT for b in bounds)


def ordered_ids(
    filters: StartupFilters, start: int, stop: int, *, db: str
) -> tuple[list[int], str | None]:
    """`pagecache._ids_with_token` for filters `compiles` takes: the ids of
    `startup_list(filters)[start:stop]` and the data token, read by one statement."""
    bounds = [b for b in (filters.min_mrr, filters.max_mrr) if b is not None]
    marks = [_MARK + n for n in range(len(bounds))]
    shape = (filters.min_mrr is not None, filters.max_mrr is not None)

    def make() -> _Compiled:
        stand_in = iter(marks)
        shaped = StartupFilters(
            min_mrr=next(stand_in) if shape[0] else None,
            max_mrr=next(stand_in) if shape[1] else None,
            sort=filters.sort,
        )
        token = Generation.objects.filter(kind="data").values("token")[:1]
        qs = startup_list(filters=shaped).using(db).annotate(data_token=Subquery(token))
        return _Compiled(qs.values_list("id", "data_token"), marks, db=db)

    statement = _compiled(db, ("ids", filters.sort, shape), make)
    found = statement.rows(
        bounds, db=db, suffix=" LIMIT %s OFFSET %s", extra=(max(0, stop - start), start)
    )
    return [row[0] for row in found], (found[0][1] if found else None)


def history_rows(
    slug: str, start: date | None, end: date | None, *, columns: tuple[str, ...], db: str
) -> tuple[str, list[tuple]] | None:
    """The published startup `slug` (its slug as stored) and its snapshots from `start` to
    `end` (inclusive, either open), oldest first, each a tuple of the snapshot's `columns`
    (the first its `date`); None when no published startup has that slug. One prepared
    statement (the startup left-joined to its snapshots of the range): through the ORM the
    history was two statements compiled anew on each request and a model instance per
    day, about 1 ms of CPU."""
    if not storable_slug(slug):
        return None
    adapt = connections[db].ops.adapt_datefield_value
    marks = [_SLUG_MARK, *(adapt(day) for day in _DAY_MARKS)]

    def make() -> _Compiled:
        first, last = _DAY_MARKS
        in_range = Q(snapshots__date__gte=first, snapshots__date__lte=last)
        qs = published_startups(db=db).filter(slug=_SLUG_MARK)
        qs = qs.annotate(day=FilteredRelation("snapshots", condition=in_range))
        days = [f"day__{column}" for column in columns]
        return _Compiled(qs.order_by("day__date").values_list("slug", *days), marks, db=db)

    statement = _compiled(db, ("history", columns), make)
    bounds = (adapt(start or date.min), adapt(end or date.max))
    rows = statement.rows([slug, *bounds], db=db, prepare=True)
    if not rows:
        return None
    return rows[0][0], [row[1:] for row in rows if row[1] is not None]


def sort_key_of(slug: str, *, db: str) -> tuple[int, str, int | None] | None:
    """The id, name and MRR of the published startup `slug` (a cursor's own startup, where
    the next page starts), or None: one prepared statement by its unique slug (through the
    ORM, compiled on every cursor page, about a fifth of such a page's CPU)."""
    if not storable_slug(slug):
        return None

    def make() -> _Compiled:
        own = published_startups(db=db).filter(slug=_SLUG_MARK).order_by()
        return _Compiled(own.values_list("id", "name", "mrr"), [_SLUG_MARK], db=db)

    rows = _compiled(db, ("sort key",), make).rows([slug], db=db, prepare=True)
    return rows[0] if rows else None
