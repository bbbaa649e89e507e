"""Invalidation, one mechanism: every write to a registered model replaces its kind's token.

Each app registers the models its cached copies are made from, in its apps.py `ready()`
(`register("auth", ApiKey, ...)`); the read cache imports no app. A registered model is then
covered on both ways it can be written:

- saves (and, with `deletes=True`, deletions) through model signals: `bump(kind)` in the
  save's transaction;
- bulk writes, which send no signals (`QuerySet.update`, `bulk_create`, `QuerySet.delete`,
  and `bulk_update`, which updates through `update`): the registry routes every queryset's
  bulk writes through `bulk_written`, which notes those of a registered model that changed
  rows (through any manager, related managers included). A kind without an itemising
  service ("auth") is bumped at once. The "data" kind is itemised by the change service
  (startups/changes.py), whose `bump` names the changed startups (`<epoch>.<sequence>`): a
  bulk write awaits that bump in its own transaction (or `startups.changes.nothing_visible()`,
  where the service found that nothing any surface shows changed). A transaction that
  commits without either is caught at commit: the kind is bumped right after (a new epoch:
  every copy dropped) and the write is logged as an error, so a forgotten change costs a
  cold cache and at most the moment between the commit and that bump. Outside a transaction
  the write has committed already, and the kind is bumped at once.

Fields that change nothing any copy holds are named per model (`ignores`): a bulk write or
a save touching only them (`last_used_at`, `last_login`) bumps nothing. Nor does creating
rows no copy can hold yet (`new_rows_shown=False`: a new account has no keys and owns no
startup until a later write, itself covered, says so).
"""

import logging
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from django.db import connections, models, router, transaction
from django.db.models.signals import post_delete, post_save

from core import readcache
from core.readcache import Kind

logger = logging.getLogger(__name__)

# kind -> {model: (fields that change nothing, skip(created, update_fields), new rows shown)}
Entry = tuple[frozenset[str], Callable[..., bool], bool]
REGISTRY: dict[str, dict[type[models.Model], Entry]] = {kind: {} for kind in readcache.KINDS}
# Kinds whose bulk writes await a service's own bump in the write's transaction.
_ITEMISED: set[str] = set()


def itemised(kind: Kind) -> None:
    """Bulk writes of `kind` are followed by its change service's `bump` (which itemises
    them) in their transaction; one that is not is caught at commit."""
    _ITEMISED.add(kind)


def _never(created: bool, update_fields: Any) -> bool:
    return False


def register(
    kind: Kind,
    *registered: type[models.Model],
    deletes: bool = False,
    ignores: Iterable[str] = (),
    skip: Callable[[bool, Any], bool] = _never,
    new_rows_shown: bool = True,
) -> None:
    """Writes of these models replace `kind`'s token: saves (deletions too with `deletes`),
    except those `skip(created, update_fields)` names, and bulk writes of any field but
    `ignores` (and `bulk_create` only if `new_rows_shown`)."""
    ignored = frozenset(ignores)
    for model in registered:
        REGISTRY[kind][model] = (ignored, skip, new_rows_shown)
        uid = f"readcache-{kind}-{model._meta.label}"
        post_save.connect(_saved, sender=model, dispatch_uid=uid)
        if deletes:
            post_delete.connect(_deleted, sender=model, dispatch_uid=f"{uid}-deleted")
        _guard(model)


def kinds_of(model: type[models.Model]) -> list[str]:
    return [kind for kind, models_ in REGISTRY.items() if model in models_]


def registered(kind: Kind) -> tuple[type[models.Model], ...]:
    return tuple(REGISTRY[kind])


def only_ignored(model: type[models.Model], kind: str, fields: Iterable[str] | None) -> bool:
    """Whether a write touching `fields` (None: every field) changes nothing `kind` holds."""
    if fields is None:
        return False
    names = {model._meta.get_field(name).name for name in fields}
    return bool(names) and names <= REGISTRY[kind][model][0]


def _saved(sender: type, update_fields=None, created=False, **kwargs: Any) -> None:
    for kind in kinds_of(sender):
        if REGISTRY[kind][sender][1](created, update_fields):
            continue
        if not created and only_ignored(sender, kind, update_fields):
            continue
        readcache.bump(kind)


def _deleted(sender: type, **kwargs: Any) -> None:
    for kind in kinds_of(sender):
        readcache.bump(kind)


def bulk_written(
    model: type[models.Model], db: str, fields: Iterable[str] | None, *, created: bool = False
) -> None:
    """A bulk write of `model` that changed rows through `db` (`fields`: the ones an update
    set; None: whole rows): its kinds are bumped, now or by the transaction's own service
    (see the module's docstring)."""
    fields = None if fields is None else list(fields)
    connection = connections[db]
    for kind in kinds_of(model):
        if only_ignored(model, kind, fields) or (created and not REGISTRY[kind][model][2]):
            continue
        if kind not in _ITEMISED or not connection.in_atomic_block:
            readcache.bump(kind)
            continue
        marker = object()
        readcache.awaiting_bump(kind, marker)
        transaction.on_commit(partial(_settle, kind, marker, model), using=db)


def _settle(kind: Kind, marker: object, model: type[models.Model]) -> None:
    if readcache.unsettled(kind, marker):
        logger.error(
            "a bulk write of %s committed without its %s bump: every copy dropped",
            model._meta.label,
            kind,
        )
        readcache.bump(kind)


def _write_db(queryset: models.QuerySet) -> str:
    return queryset._db or router.db_for_write(queryset.model, **queryset._hints)


def _watched(queryset: models.QuerySet) -> bool:
    return any(queryset.model in models_ for models_ in REGISTRY.values())


def _update(self: models.QuerySet, **kwargs: Any) -> int:
    changed = _plain_update(self, **kwargs)
    if changed and _watched(self):
        bulk_written(self.model, _write_db(self), kwargs)
    return changed


def _bulk_create(self: models.QuerySet, objs: Iterable[models.Model], *args: Any, **kw: Any):
    created = _plain_bulk_create(self, objs, *args, **kw)
    if created and _watched(self):
        bulk_written(self.model, _write_db(self), None, created=True)
    return created


def _delete(self: models.QuerySet) -> tuple[int, dict[str, int]]:
    db = _write_db(self)
    deleted = _plain_delete(self)
    if deleted[0] and _watched(self):
        bulk_written(self.model, db, None)
    return deleted


# The bulk writes of every queryset (managers, related managers, custom querysets alike) go
# through these; for a model no app registered they cost one dictionary lookup.
_plain_update = models.QuerySet.update
_plain_bulk_create = models.QuerySet.bulk_create
_plain_delete = models.QuerySet.delete
_update.alters_data = _bulk_create.alters_data = _delete.alters_data = True
_delete.queryset_only = True


def _guard(model: type[models.Model]) -> None:
    """Route bulk writes through the registry (once, for every queryset class)."""
    if models.QuerySet.update is not _update:
        models.QuerySet.update = _update
        models.QuerySet.bulk_create = _bulk_create
        models.QuerySet.delete = _delete
