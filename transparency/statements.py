"""What of an attestation the transparency log records: the statement.

The statement is the startup's slug and its attested figures: every field of the detail's
`verification` object except those that change with every sync or request without the figures
changing (`status`, `lastSyncedAt`, `verifiedAt`) or that depend on the host asked
(`methodology`, an absolute URL). Claims about the issuing itself (`issuedAt`, and any
iss/sub/iat/exp) are not part of it either: the statement is picked by name, so claims added
to attestations later stay out unless they are figures.
"""

from functools import cache

from core.renderers import camel_key
from startups.serializers import VerificationSerializer

VOLATILE = frozenset({"status", "last_synced_at", "verified_at", "methodology"})


@cache
def statement_keys() -> tuple[str, ...]:
    fields = VerificationSerializer().fields
    return ("slug", *(camel_key(name) for name in fields if name not in VOLATILE))


def attestation_statement(payload: dict) -> dict:
    """The logged statement of an attestation payload (camelCase claims)."""
    return {key: payload[key] for key in statement_keys() if key in payload}
