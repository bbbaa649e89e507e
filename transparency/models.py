"""The transparency log's two append-only tables: the leaves and the signed tree heads.

Rows are only ever inserted. `save()` refuses to update, `delete()` and the querysets'
`update()`/`delete()` refuse outright, and migration 0001 adds database triggers (PostgreSQL
and SQLite) that abort any UPDATE or DELETE, so no code path of the service can rewrite the
log. An operator with the database's owner role could still drop the triggers: that is what
the consistency proofs against earlier signed tree heads catch (docs/transparency-log.md).
"""

from django.db import models


class AppendOnlyError(RuntimeError):
    """Someone tried to change or remove a row of the transparency log."""


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: no update")

    def delete(self):
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: no delete")

    def bulk_update(self, *args, **kwargs):
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: no update")


class AppendOnly(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only: no update")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only: no delete")


class LogEntry(AppendOnly):
    """One leaf: the canonical JSON of one signed statement (see transparency/services.py)."""

    # The leaf index: 0, 1, 2, ... with no gaps; the primary key, so two writers can never
    # both take one index.
    index = models.BigIntegerField(primary_key=True)
    # Not a foreign key: a startup that is deleted later keeps its leaves.
    slug = models.CharField(max_length=200)
    entry = models.BinaryField()
    leaf_hash = models.CharField(max_length=64, db_index=True, help_text="hex SHA-256(0x00||entry)")
    # SHA-256 of the statement without its log fields: a new leaf only when this changes.
    content_hash = models.CharField(max_length=64)
    logged_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["slug", "-index"], name="log_entry_slug_latest")]

    def __str__(self) -> str:
        return f"leaf {self.index} ({self.slug})"


class TreeHead(AppendOnly):
    """A signed tree head (STH): one per tree size, kept forever so a monitor can check that
    every later head is consistent with every earlier one."""

    tree_size = models.BigIntegerField(primary_key=True)
    root_hash = models.CharField(max_length=64, help_text="hex MTH of the first tree_size leaves")
    timestamp = models.DateTimeField()
    signature = models.TextField(help_text="Compact JWS (EdDSA) over the head's JSON.")
    key_id = models.CharField(max_length=100)

    def __str__(self) -> str:
        return f"tree head {self.tree_size}"
