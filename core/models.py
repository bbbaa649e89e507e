"""The tables the infrastructure owns: the read cache's generation tokens (core/readcache.py)
and the sequence of sync stamps read beside the kept copies (core/beside.py).

The table kept its first name (`openstartup_generation`, when the project package owned it):
moving the model moved no data, and the token SQL stayed byte-identical.
"""

from typing import Any

from django.db import models


class Generation(models.Model):
    """The current generation token of one kind of cached data ("auth", "data" or "fresh").

    Every write that changes that kind replaces the token in the same transaction, so a
    per-process copy built under an older token is never served again, by any server, from the
    moment the write commits: the database itself says which copies are current, whatever the
    shared cache (Redis) did meanwhile.
    """

    kind = models.CharField(max_length=8, primary_key=True)
    token = models.CharField(max_length=32)

    class Meta:
        db_table = "openstartup_generation"

    def __str__(self) -> str:
        return f"{self.kind}: {self.token}"


class FreshStamp(models.Model):
    """One sync that changed nothing but its time (startups/freshness.py), naming its startup.

    The "fresh" token is `<epoch>.<id of the last stamp>`, written in the stamp's transaction,
    so a process that sees a newer token reads the stamps since its own and forgets the sync
    times of those startups only (core/beside.py), as the change sequence does for the data
    copies. No foreign key: a stamp outlives nothing it names for long (old rows are pruned).
    """

    id = models.BigAutoField(primary_key=True)
    startup_id = models.BigIntegerField()

    class Meta:
        db_table = "openstartup_freshstamp"

    def __str__(self) -> str:
        return f"{self.pk}: startup {self.startup_id}"


# Plain SQL: about half the CPU of the ORM's compile and rows, on nearly every request.
GENERATION_TOKENS_SQL = f'SELECT kind, token FROM "{Generation._meta.db_table}"'  # noqa: S608


def generation_tokens(cursor: Any) -> dict[str, str]:
    """Every kind's token through `cursor` (a psycopg connection's: the token watch)."""
    cursor.execute(GENERATION_TOKENS_SQL)
    return dict(cursor.fetchall())
