"""Django's PostgreSQL backend with connecting bounded by the request's database deadline, and
prepared statements for the statements nearly every request sends."""

from typing import Any


def prepared_rows(connection: Any, sql: str) -> list[tuple]:
    """The rows of a hot plain-SQL statement without parameters: on PostgreSQL through a
    cursor kept per connection and prepared there (the generation tokens, read by nearly every
    request), elsewhere through the ordinary cursor."""
    rows = getattr(connection, "prepared_rows", None)
    if rows is not None:
        return rows(sql)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def prepared_cursor(connection: Any) -> Any:
    """A cursor for a hot plain-SQL statement: on PostgreSQL one whose statements are prepared
    once per connection (PostgreSQL skips parsing and planning them afterwards; planning the
    Free charge took 0.5-0.7 ms of every Free request), elsewhere the ordinary cursor."""
    prepared = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared is not None else connection.cursor()
