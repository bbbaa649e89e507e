"""Signed attestations of verified figures: compact JWS (RFC 7515), Ed25519 (`alg: EdDSA`,
RFC 8037), signed with joserfc.

Keys come from ATTESTATION_SIGNING_KEYS (comma-separated base64url Ed25519 private keys, 32
bytes each): the first signs, all are published at /.well-known/jwks.json so attestations signed
before a rotation still verify. Unset: a fixed, public development key whose `kid` says so;
settings refuse to start in production mode without real keys. A key's `kid` is its RFC 7638
thumbprint.
"""

import base64
import binascii
import hashlib
import warnings
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from joserfc import jws
from joserfc.jwk import OKPKey

from core.formats import iso_timestamp, site_url
from core.renderers import camelize
from startups.models import Startup
from startups.serializers import VerificationSerializer, verification_of

ALG = "EdDSA"
# DEVELOPMENT ONLY: public, so anything it signs proves nothing. Its kid starts with "dev-".
DEV_SEED = hashlib.sha256(b"openstartup development-only attestation signing key").digest()
DEV_KID_PREFIX = "dev-"


@dataclass(frozen=True)
class SigningKey:
    kid: str
    key: OKPKey

    def public_jwk(self) -> dict:
        return {**self.key.as_dict(private=False), "kid": self.kid, "alg": ALG, "use": "sig"}


def _decode_seed(raw: str) -> bytes:
    try:
        seed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        seed = b""
    if len(seed) != 32:
        raise ImproperlyConfigured(
            "ATTESTATION_SIGNING_KEYS entries must be base64url Ed25519 private keys (32 bytes)."
        )
    return seed


def _key(seed: bytes, *, development: bool = False) -> SigningKey:
    key = OKPKey.import_key(Ed25519PrivateKey.from_private_bytes(seed))
    thumbprint = key.thumbprint()
    return SigningKey(kid=(DEV_KID_PREFIX if development else "") + thumbprint, key=key)


@lru_cache(maxsize=4)
def _keys_for(configured: tuple[str, ...]) -> tuple[SigningKey, ...]:
    if not configured:
        return (_key(DEV_SEED, development=True),)
    return tuple(_key(_decode_seed(raw)) for raw in configured)


def signing_keys() -> tuple[SigningKey, ...]:
    """Every configured key, the signing one first."""
    return _keys_for(tuple(settings.ATTESTATION_SIGNING_KEYS))


def jwks() -> dict:
    """The public keys as a JWK Set (RFC 7517)."""
    return {"keys": [key.public_jwk() for key in signing_keys()]}


def attestation_payload(startup: Startup, *, request: HttpRequest | None, now: datetime) -> dict:
    """The signed claims: the slug, every field of the detail's `verification` object
    (camelCase, as the detail shows it, monthly rows included) and when it was issued."""
    verification = verification_of(startup)
    figures = VerificationSerializer(verification, context={"request": request}).data
    return {
        "slug": startup.slug,
        **camelize(figures),
        "issuedAt": iso_timestamp(now),
        **registered_claims(startup, request=request, now=now),
    }


def registered_claims(startup: Startup, *, request: HttpRequest | None, now: datetime) -> dict:
    """The JWT claims (RFC 7519) a verifier must check: who issued it (`iss`, SITE_URL), what it
    is about (`sub`, the slug), when it was issued (`iat`) and until when it holds (`exp`,
    ATTESTATION_VALIDITY_SECONDS later), in Unix seconds. Attestations issued before these
    claims existed carry none of them; they verify as issued."""
    issued = int(now.timestamp())
    return {
        "iss": site_url(request),
        "sub": startup.slug,
        "iat": issued,
        "exp": issued + settings.ATTESTATION_VALIDITY_SECONDS,
    }


def attestation_sign(payload: dict, *, typ: str = "JWT") -> tuple[str, str]:
    """The compact JWS of `payload` and the kid of the key that signed it (`typ`: the header's
    media type; the transparency log's tree heads say theirs)."""
    signer = signing_keys()[0]
    header = {"alg": ALG, "typ": typ, "kid": signer.kid}
    with warnings.catch_warnings():
        # RFC 9864 adds the fully specified "Ed25519" name; "EdDSA" is what verifiers support.
        warnings.simplefilter("ignore")
        token = jws.serialize_compact(header, orjson.dumps(payload), signer.key, algorithms=[ALG])
    return token, signer.kid
