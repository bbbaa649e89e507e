"""An attestation's place in the transparency log: its leaf, a tree head and the proof."""

import base64

from django.utils import timezone

from core.formats import iso_timestamp
from transparency.services import (
    inclusion_proof,
    log_append,
    tree_head_data,
    tree_head_latest,
)
from transparency.statements import attestation_statement


def attestation_log(payload: dict) -> tuple[dict, dict]:
    """Log the payload's statement (a new leaf only when it changed) and return the payload
    with the leaf's `logIndex` and `loggedAt` claims, and the response fields that let anyone
    check the leaf's inclusion offline: `leaf_index`, `log_entry` (the leaf's bytes, base64),
    `tree_head` and `inclusion_proof` (hex audit path up to that head)."""
    leaf = log_append(
        slug=payload["slug"], statement=attestation_statement(payload), now=timezone.now()
    )
    payload = {**payload, "logIndex": leaf.index, "loggedAt": iso_timestamp(leaf.logged_at)}
    head = tree_head_latest()
    path = inclusion_proof(leaf_index=leaf.index, tree_size=head.tree_size)
    return payload, {
        "leaf_index": leaf.index,
        "log_entry": base64.b64encode(bytes(leaf.entry)).decode(),
        "tree_head": tree_head_data(head),
        "inclusion_proof": [node.hex() for node in path],
    }
