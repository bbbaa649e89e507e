"""Hot statements as plain SQL, written once, with the ORM's own conversions of the values.

Django compiles a queryset anew each time it runs (the lookups, the joins, the SQL text): for
the refresh worker's sync that changes nothing (~111 a second at 1,000,000 startups, ten
statements each) the compiling took about a third of the sync's CPU. The statements that
run on that path are written out once as SQL, and their values cross with what the model's
field would do (`to_db`: the field's own preparation, so SQLite stores a timestamp as the
ORM does and PostgreSQL gets JSON as JSON; `from_db`: the backend's and the field's
converters, so a row reads back as the ORM would give it).

Writes sent this way pass by core/invalidation.py's guard (it watches querysets): each caller
ends in its change service's record or in `startups.changes.nothing_visible()`, as the ORM's
writes there did; the statements' own docstrings say which.
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import connections, models
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.postgresql import prepared_cursor


def table(model: type[models.Model], using: str = "default") -> str:
    """The model's table, quoted for the database."""
    return connections[using].ops.quote_name(model._meta.db_table)


def to_db(model: type[models.Model], name: str, value: Any, using: str = "default") -> Any:
    """`value` of the model's field `name` as the ORM sends it to the database."""
    return model._meta.get_field(name).get_db_prep_save(value, connections[using])


def from_db(model: type[models.Model], name: str, value: Any, using: str = "default") -> Any:
    """`value` read from the model's field `name` as the ORM gives it back."""
    connection = connections[using]
    column = model._meta.get_field(name).get_col(model._meta.db_table)
    for convert in connection.ops.get_db_converters(column) + column.get_db_converters(connection):
        value = convert(value, column, connection)
    return value


def aware(value: datetime | str | None) -> datetime | None:
    """A timestamp column as plain SQL reads it (SQLite: naive UTC, or its text form), as the
    ORM gives it: aware, in UTC. `from_db` does the same for any field; this is its cheap form
    for the read paths that convert a timestamp a row (list pages, profiles)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def run(sql: str, params: Sequence[Any], *, using: str = "default") -> tuple[int, list[tuple]]:
    """Send one statement (prepared on PostgreSQL: parsed and planned once per connection);
    (rows it changed, rows it returned)."""
    with prepared_cursor(connections[using]) as cursor:
        cursor.execute(sql, list(params))
        rows = cursor.fetchall() if cursor.description else []
        return cursor.rowcount, rows
