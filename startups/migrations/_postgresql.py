"""The operation behind this app's PostgreSQL-only indexes (0002, 0004, 0005).

Each index is a name and its definition after `ON startups_startup`; forwards creates what is
missing, backwards drops them, and SQLite gets nothing (its tables are small in development
and the model's own indexes serve it). The migration loader skips this module: its name starts
with an underscore.
"""

from django.db import migrations

TABLE = "startups_startup"


def postgresql_indexes(
    indexes: list[tuple[str, str]], *, extensions: tuple[str, ...] = ()
) -> migrations.RunPython:
    """Create `indexes` (and first the `extensions` they need) on PostgreSQL only."""

    def create(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for extension in extensions:
            schema_editor.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
        for name, definition in indexes:
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {TABLE} {definition}")

    def drop(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for name, _ in indexes:
            schema_editor.execute(f"DROP INDEX IF EXISTS {name}")

    return migrations.RunPython(create, drop, elidable=False)
