"""Appending to the transparency log, signing its tree heads and computing its proofs.

A leaf is one distinct signed statement: the attested figures of one startup (the statement,
transparency/statements.py) plus where and when it was logged (`logIndex`, `loggedAt`), as
canonical JSON (UTF-8, keys sorted, no spaces). A statement is appended only when its content
differs from the startup's latest leaf, so repeated attestations and syncs that change nothing
add nothing. Every append signs a tree head for the new size in the same transaction; tree
heads are kept forever.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime

import orjson
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction

from core.formats import iso_timestamp
from startups.attestation import attestation_sign
from transparency import merkle
from transparency.models import LogEntry, TreeHead

# The header `typ` of a signed tree head's JWS (attestations say "JWT").
TREE_HEAD_TYP = "openstartup-tree-head+jwt"
# Most leaves one /api/v1/log/entries answer returns.
MAX_ENTRIES = 100
# pg_advisory_xact_lock key of the log's single writer (any constant unique to this purpose).
_APPEND_LOCK = 0x6F7374_6C6F67  # "ost" "log"
_ATTEMPTS = 5


class LogRangeError(ValueError):
    """A proof or range the log cannot give (sizes beyond the published tree, etc.)."""


def canonical_json(value: dict) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@dataclass(frozen=True)
class SignedTreeHead:
    tree_size: int
    root_hash: str
    timestamp: datetime
    signature: str
    key_id: str


def tree_head_data(head: SignedTreeHead) -> dict:
    """A signed tree head as the API shows it (snake_case; the REST renderer camelizes)."""
    return {
        "tree_size": head.tree_size,
        "timestamp": iso_timestamp(head.timestamp),
        "sha256_root_hash": head.root_hash,
        "signature": head.signature,
        "key_id": head.key_id,
    }


def _head(row: TreeHead) -> SignedTreeHead:
    return SignedTreeHead(row.tree_size, row.root_hash, row.timestamp, row.signature, row.key_id)


def _lock_log() -> None:
    """Serialise appenders: on PostgreSQL an advisory lock held to the end of the transaction
    (it also makes the "same as the latest leaf?" check exact); SQLite has one writer anyway,
    and the primary key on `index` refuses a second leaf at one index whatever happens."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_APPEND_LOCK])


def _latest(slug: str) -> LogEntry | None:
    return LogEntry.objects.filter(slug=slug).order_by("-index").first()


def log_size() -> int:
    """The size of the latest signed tree head (0 before the first leaf)."""
    latest = TreeHead.objects.order_by("-tree_size").values_list("tree_size", flat=True).first()
    return latest or 0


def leaf_hashes(size: int) -> list[bytes]:
    rows = LogEntry.objects.filter(index__lt=size).order_by("index")
    return [bytes.fromhex(value) for value in rows.values_list("leaf_hash", flat=True)]


def tree_head_sign(*, size: int, now: datetime) -> SignedTreeHead:
    """Sign and keep the head of the first `size` leaves (inside the appender's transaction)."""
    root = merkle.root(leaf_hashes(size)).hex()
    moment = iso_timestamp(now)
    payload = {"treeSize": size, "timestamp": moment, "sha256RootHash": root}
    signature, kid = attestation_sign(payload, typ=TREE_HEAD_TYP)
    row = TreeHead.objects.create(
        tree_size=size, root_hash=root, timestamp=now, signature=signature, key_id=kid
    )
    return _head(row)


def log_append(*, slug: str, statement: dict, now: datetime) -> LogEntry:
    """The startup's leaf for `statement`: its latest one when the content is the same, else a
    new leaf (and a new signed tree head)."""
    content_hash = hashlib.sha256(canonical_json(statement)).hexdigest()
    latest = _latest(slug)
    if latest is not None and latest.content_hash == content_hash:
        return latest  # the common case: nothing changed, nothing written
    for attempt in range(_ATTEMPTS):
        try:
            with transaction.atomic():
                _lock_log()
                latest = _latest(slug)
                if latest is not None and latest.content_hash == content_hash:
                    return latest
                index = log_size()
                entry = canonical_json(
                    {**statement, "logIndex": index, "loggedAt": iso_timestamp(now)}
                )
                leaf = LogEntry.objects.create(
                    index=index,
                    slug=slug,
                    entry=entry,
                    leaf_hash=merkle.leaf_hash(entry).hex(),
                    content_hash=content_hash,
                    logged_at=now,
                )
                tree_head_sign(size=index + 1, now=now)
                return leaf
        except IntegrityError:
            # Another writer took this index first (possible only without the advisory lock).
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def tree_head_latest() -> SignedTreeHead | None:
    row = TreeHead.objects.order_by("-tree_size").first()
    return None if row is None else _head(row)


def tree_head_at(size: int) -> SignedTreeHead | None:
    row = TreeHead.objects.filter(tree_size=size).first()
    return None if row is None else _head(row)


def log_entries(*, start: int, end: int) -> list[LogEntry]:
    """Leaves `start`..`end` inclusive (as RFC 6962's get-entries), at most MAX_ENTRIES."""
    size = log_size()
    if start >= size:
        raise LogRangeError(f"start must be smaller than the tree size ({size})")
    end = min(end, size - 1, start + MAX_ENTRIES - 1)
    return list(LogEntry.objects.filter(index__gte=start, index__lte=end).order_by("index"))


def leaf_index_of(leaf_hash: str) -> int | None:
    """The first leaf with this hex leaf hash."""
    found = LogEntry.objects.filter(leaf_hash=leaf_hash).order_by("index")
    return found.values_list("index", flat=True).first()


def leaf_hash_at(index: int) -> str:
    return LogEntry.objects.values_list("leaf_hash", flat=True).get(index=index)


# Proofs never change once the heads they join are signed: cached for a day, keyed by the sizes
# and the signed root hashes (so a log that was reset, as in development, never gets another
# log's proofs). Computing one reads every leaf hash up to the size: linear in the log.
PROOF_CACHE_SECONDS = 24 * 3600


def _root_at(size: int) -> str | None:
    return TreeHead.objects.values_list("root_hash", flat=True).filter(tree_size=size).first()


def _cached_proof(key: str, compute) -> list[bytes]:
    if "None" in key.split(":"):  # a size with no signed head: nothing to key it by
        return compute()
    cached = cache.get(key)
    if isinstance(cached, list):
        return [bytes.fromhex(node) for node in cached]
    proof = compute()
    cache.set(key, [node.hex() for node in proof], PROOF_CACHE_SECONDS)
    return proof


def inclusion_proof(*, leaf_index: int, tree_size: int) -> list[bytes]:
    size = log_size()
    if not 0 < tree_size <= size:
        raise LogRangeError(f"treeSize must be between 1 and the latest tree size ({size})")
    if leaf_index >= tree_size:
        raise LogRangeError("the leaf must be smaller than treeSize")
    key = f"log:inclusion:{leaf_index}:{tree_size}:{_root_at(tree_size)}"
    return _cached_proof(key, lambda: merkle.inclusion_path(leaf_index, leaf_hashes(tree_size)))


def consistency_proof(*, first: int, second: int) -> list[bytes]:
    size = log_size()
    if not 0 < second <= size:
        raise LogRangeError(f"second must be between 1 and the latest tree size ({size})")
    if not 0 < first <= second:
        raise LogRangeError("first must be between 1 and second")
    key = f"log:consistency:{first}:{second}:{_root_at(first)}:{_root_at(second)}"
    return _cached_proof(key, lambda: merkle.consistency_proof(first, leaf_hashes(second)))
