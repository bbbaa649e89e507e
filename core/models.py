"""The one table the infrastructure owns: the read cache's generation tokens (core/readcache.py).

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


# Plain SQL: about half the CPU of the ORM's compile and rows, on nearly every request.
GENERATION_TOKENS_SQL = f'SELECT kind, token FROM "{Generation._meta.db_table}"'  # noqa: S608


def generation_tokens(cursor: Any) -> dict[str, str]:
    """Every kind's token through `cursor` (a psycopg connection's: the token watch)."""
    cursor.execute(GENERATION_TOKENS_SQL)
    return dict(cursor.fetchall())
