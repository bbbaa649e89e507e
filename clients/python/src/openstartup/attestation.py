"""Verify an attestation offline: a compact JWS (RFC 7515) signed with Ed25519 (`alg: EdDSA`,
RFC 8037) by one of the keys of the service's `/.well-known/jwks.json`.

Needs the `cryptography` package (`pip install "openstartup[verify]"`).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Mapping
from typing import Any

from openstartup.errors import OpenStartupError

ALGORITHMS = ("EdDSA", "Ed25519")  # RFC 8037's name and RFC 9864's fully specified one


class AttestationError(OpenStartupError):
    """The attestation does not verify. `code` says why: `bad_signature` (malformed, unknown
    key, or the figures were changed), `expired` (past `exp`), `wrong_issuer` (`iss` is not the
    service you trust), `wrong_subject` (`sub` is not the startup you asked about),
    `missing_claim` (with `require_claims`, an attestation issued before `iss`/`sub`/`exp`)."""


def _b64(segment: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError) as error:
        raise AttestationError("not base64url", code="bad_signature") from error


def _public_key(jwks: Mapping[str, Any], kid: Any):
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError(
            'verifying attestations needs cryptography: pip install "openstartup[verify]"'
        ) from error
    for key in jwks.get("keys") or []:
        if key.get("kid") == kid and key.get("kty") == "OKP" and key.get("crv") == "Ed25519":
            try:
                return Ed25519PublicKey.from_public_bytes(_b64(str(key.get("x", ""))))
            except ValueError as error:
                raise AttestationError("unreadable key", code="bad_signature") from error
    raise AttestationError(f"no Ed25519 key with kid {kid!r} in the JWKS", code="bad_signature")


def verify_attestation(
    token: str,
    jwks: Mapping[str, Any],
    *,
    slug: str | None = None,
    issuer: str | None = None,
    now: float | None = None,
    leeway: float = 60.0,
    require_claims: bool = False,
) -> dict[str, Any]:
    """The attestation's claims, once its signature and registered claims check out.

    The signature must be by the JWKS key its header names. When the attestation carries them
    (every one issued since they were added does): `exp` must not have passed, `iat` must not
    be in the future, `sub` must equal its `slug` claim and `slug` (if given), and `iss` must
    equal `issuer` (if given; compared without a trailing slash). `leeway` seconds allow for
    clock skew. Attestations issued before these claims existed verify as issued, unless
    `require_claims` is true. Raises AttestationError otherwise.
    """
    parts = token.strip().split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise AttestationError("not a compact JWS", code="bad_signature")
    try:
        header = json.loads(_b64(parts[0]))
    except ValueError as error:
        raise AttestationError("unreadable header", code="bad_signature") from error
    if not isinstance(header, dict) or header.get("alg") not in ALGORITHMS:
        raise AttestationError("not an EdDSA signature", code="bad_signature")
    key = _public_key(jwks, header.get("kid"))
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(_b64(parts[2]), f"{parts[0]}.{parts[1]}".encode("ascii"))
        claims = json.loads(_b64(parts[1]))
    except (InvalidSignature, UnicodeEncodeError, ValueError) as error:
        raise AttestationError("the signature does not match", code="bad_signature") from error
    if not isinstance(claims, dict):
        raise AttestationError("the payload is not an object", code="bad_signature")
    _check_claims(claims, slug=slug, issuer=issuer, now=now, leeway=leeway)
    if require_claims and not {"iss", "sub", "iat", "exp"} <= claims.keys():
        raise AttestationError(
            "issued before attestations carried iss, sub, iat and exp", code="missing_claim"
        )
    return claims


def _check_claims(
    claims: dict, *, slug: str | None, issuer: str | None, now: float | None, leeway: float
) -> None:
    now = time.time() if now is None else now
    if "exp" in claims:
        if not isinstance(claims["exp"], int | float) or now > claims["exp"] + leeway:
            raise AttestationError(f"expired (exp {claims['exp']!r})", code="expired")
    if "iat" in claims:
        if not isinstance(claims["iat"], int | float) or claims["iat"] > now + leeway:
            raise AttestationError("issued in the future", code="bad_signature")
    if "sub" in claims:
        wanted = {claims.get("slug")} | ({slug} if slug is not None else set())
        if {claims["sub"]} != wanted:
            raise AttestationError(
                f"about {claims['sub']!r}, not {slug or claims.get('slug')!r}", code="wrong_subject"
            )
    elif slug is not None and claims.get("slug") != slug:
        raise AttestationError(f"about {claims.get('slug')!r}, not {slug!r}", code="wrong_subject")
    if "iss" in claims and issuer is not None:
        if str(claims["iss"]).rstrip("/") != issuer.rstrip("/"):
            raise AttestationError(
                f"issued by {claims['iss']!r}, not {issuer!r}", code="wrong_issuer"
            )
