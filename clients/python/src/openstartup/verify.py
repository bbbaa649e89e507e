"""Offline verification of attestations and of the transparency log, with only the JWKS.

Nothing here talks to the service: give it what you saved (an attestation answer, tree heads,
a consistency proof) and the JWK Set of /.well-known/jwks.json.

    jwks = json.load(open("jwks.json"))
    result = verify_attestation(attestation, jwks)   # signature, leaf, inclusion in its head
    verify_consistency(older_head, newer_head, proof, jwks)  # the log only grew

Every function raises `VerificationError` (with the reason) when a check fails. The Merkle
checks are RFC 9162 section 2.1.3.2 (inclusion) and 2.1.4.2 (consistency), for the RFC 6962
tree hashing the log uses: leaves SHA-256(0x00 || entry), nodes SHA-256(0x01 || left || right).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "VerificationError",
    "VerifiedAttestation",
    "VerifiedTreeHead",
    "leaf_hash",
    "verify_attestation",
    "verify_consistency",
    "verify_consistency_proof",
    "verify_inclusion_proof",
    "verify_jws",
    "verify_tree_head",
]

TREE_HEAD_TYP = "openstartup-tree-head+jwt"


class VerificationError(Exception):
    """A signature, a leaf or a proof did not check out."""


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion_proof(
    leaf: bytes, index: int, tree_size: int, path: Sequence[bytes], root: bytes
) -> bool:
    """Whether `path` proves that leaf hash `leaf` is leaf `index` of the tree of `tree_size`
    leaves with root hash `root` (RFC 9162 section 2.1.3.2)."""
    if not 0 <= index < tree_size:
        return False
    fn, sn, r = index, tree_size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = _node(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency_proof(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether `proof` shows that the tree of `second` leaves with root `second_root` extends
    the tree of `first` leaves with root `first_root` (RFC 9162 section 2.1.4.2)."""
    if not 0 < first <= second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the first tree is a subtree of the second
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = _node(c, fr)
            sr = _node(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


def _b64url(part: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError) as error:
        raise VerificationError("not a compact JWS (bad base64url)") from error


def _public_key(jwks: Mapping[str, Any], kid: str):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    for key in jwks.get("keys", []):
        if key.get("kid") == kid:
            if key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
                raise VerificationError(f"key {kid!r} is not an Ed25519 key")
            return Ed25519PublicKey.from_public_bytes(_b64url(key["x"]))
    raise VerificationError(f"no key {kid!r} in the JWKS")


def verify_jws(token: str, jwks: Mapping[str, Any], *, typ: str | None = None) -> dict:
    """The payload (a JSON object) of a compact JWS signed with EdDSA by a key of `jwks`."""
    from cryptography.exceptions import InvalidSignature

    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise VerificationError("not a compact JWS")
    try:
        header = json.loads(_b64url(parts[0]))
        payload = json.loads(_b64url(parts[1]))
    except ValueError as error:
        raise VerificationError("the JWS header or payload is not JSON") from error
    if not isinstance(header, dict) or header.get("alg") != "EdDSA":
        raise VerificationError("the JWS is not signed with EdDSA")
    if typ is not None and header.get("typ") != typ:
        raise VerificationError(f"the JWS is not a {typ}")
    key = _public_key(jwks, str(header.get("kid")))
    try:
        key.verify(_b64url(parts[2]), f"{parts[0]}.{parts[1]}".encode())
    except InvalidSignature as error:
        raise VerificationError("bad signature") from error
    if not isinstance(payload, dict):
        raise VerificationError("the JWS payload is not a JSON object")
    return payload


@dataclass(frozen=True)
class VerifiedTreeHead:
    tree_size: int
    timestamp: str
    root_hash: bytes


def _hash(value: Any, what: str) -> bytes:
    try:
        raw = bytes.fromhex(value)
    except (TypeError, ValueError):
        raw = b""
    if len(raw) != 32:
        raise VerificationError(f"{what} is not a hex SHA-256 hash")
    return raw


def verify_tree_head(tree_head: Mapping[str, Any], jwks: Mapping[str, Any]) -> VerifiedTreeHead:
    """A signed tree head (as /api/v1/log/tree-head gives it): its signature checked, and the
    unsigned copies of its fields (if any) equal to the signed ones."""
    signed = verify_jws(tree_head.get("signature", ""), jwks, typ=TREE_HEAD_TYP)
    for name in ("treeSize", "timestamp", "sha256RootHash"):
        if name in tree_head and tree_head[name] != signed.get(name):
            raise VerificationError(f"the tree head's {name} differs from the signed one")
    size = signed.get("treeSize")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise VerificationError("the tree head's size is not a whole number")
    root = _hash(signed.get("sha256RootHash"), "the root hash")
    return VerifiedTreeHead(size, str(signed.get("timestamp")), root)


@dataclass(frozen=True)
class VerifiedAttestation:
    claims: dict
    leaf_index: int
    tree_head: VerifiedTreeHead


def verify_attestation(
    attestation: Mapping[str, Any], jwks: Mapping[str, Any]
) -> VerifiedAttestation:
    """An attestation answer (`data` of /api/v1/startups/{slug}/attestation) checked whole:
    the JWS signature; the log entry's every value equal to the signed claim of that name
    (`logIndex` included); the tree head's signature; and the entry's inclusion in that head.
    Returns the signed claims, the leaf index and the head."""
    claims = verify_jws(attestation.get("jws", ""), jwks)
    try:
        entry = base64.b64decode(attestation.get("logEntry", ""), validate=True)
        statement = json.loads(entry)
    except (binascii.Error, ValueError, TypeError) as error:
        raise VerificationError("the log entry is not base64 JSON") from error
    if not isinstance(statement, dict) or not statement:
        raise VerificationError("the log entry is not a JSON object")
    for name, value in statement.items():
        if name not in claims or claims[name] != value:
            raise VerificationError(f"the log entry's {name!r} differs from the signed claims")
    index = claims.get("logIndex")
    if attestation.get("leafIndex") != index or not isinstance(index, int):
        raise VerificationError("the leaf index differs from the signed logIndex")
    head = verify_tree_head(attestation.get("treeHead") or {}, jwks)
    path = [_hash(node, "an audit path node") for node in attestation.get("inclusionProof", [])]
    if not verify_inclusion_proof(leaf_hash(entry), index, head.tree_size, path, head.root_hash):
        raise VerificationError("the leaf is not included in the signed tree head")
    return VerifiedAttestation(claims, index, head)


def verify_consistency(
    older: Mapping[str, Any],
    newer: Mapping[str, Any],
    proof: Sequence[str] | Mapping[str, Any],
    jwks: Mapping[str, Any],
) -> tuple[VerifiedTreeHead, VerifiedTreeHead]:
    """Two signed tree heads checked, and `proof` (the hex list, or the `data` of
    /api/v1/log/proof/consistency) showing that the newer extends the older unchanged."""
    first, second = verify_tree_head(older, jwks), verify_tree_head(newer, jwks)
    if isinstance(proof, Mapping):
        if (proof.get("first"), proof.get("second")) != (first.tree_size, second.tree_size):
            raise VerificationError("the proof is for other tree sizes")
        proof = proof.get("consistency", [])
    nodes = [_hash(node, "a consistency proof node") for node in proof]
    if first.tree_size == 0:  # the empty tree is a prefix of every tree
        if first.root_hash != hashlib.sha256(b"").digest() or nodes:
            raise VerificationError("a tree head of size 0 must have the empty root")
        return first, second
    ok = verify_consistency_proof(
        first.tree_size, second.tree_size, first.root_hash, second.root_hash, nodes
    )
    if not ok:
        raise VerificationError(
            f"tree head {second.tree_size} is not consistent with tree head {first.tree_size}"
        )
    return first, second
