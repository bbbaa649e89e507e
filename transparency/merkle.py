"""The Merkle tree arithmetic of RFC 6962 section 2.1 (the same in RFC 9162 section 2.1).

Leaves hash as SHA-256(0x00 || entry), interior nodes as SHA-256(0x01 || left || right); a
tree of n > 1 leaves splits at k, the largest power of two smaller than n (so sizes that are
not powers of two hash as the RFC says, not as a balanced tree). Everything here works on the
list of leaf hashes D[0:n]; proofs are lists of 32-byte node hashes.

Only the arithmetic is written here; hashing is hashlib's SHA-256. The verifiers a third party
runs live in the Python client (clients/python/src/openstartup/verify.py), written again from
the RFC so the server never checks its own homework.
"""

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split(n: int) -> int:
    """k: the largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _mth(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    n = hi - lo
    if n == 1:
        return leaves[lo]
    k = split(n)
    return node_hash(_mth(leaves, lo, lo + k), _mth(leaves, lo + k, hi))


def root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of the leaf hashes; the empty tree's is SHA-256 of nothing."""
    return _mth(leaves, 0, len(leaves)) if leaves else EMPTY_ROOT


def inclusion_path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]): the audit path of leaf `index` in the tree of `leaves` (0 <= m < n)."""
    if not 0 <= index < len(leaves):
        raise ValueError("the leaf index must be smaller than the tree size")
    path: list[bytes] = []
    lo, hi, m = 0, len(leaves), index
    while hi - lo > 1:  # iterative PATH: the proof is built leaf-side first
        k = split(hi - lo)
        if m < k:
            path.append(_mth(leaves, lo + k, hi))
            hi = lo + k
        else:
            path.append(_mth(leaves, lo, lo + k))
            lo, m = lo + k, m - k
    return path[::-1]


def consistency_proof(first: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]): the consistency proof between the first `first` leaves and all of
    `leaves` (0 < m <= n; m == n gives the empty proof)."""
    n = len(leaves)
    if not 0 < first <= n:
        raise ValueError("the first tree size must be between 1 and the second")
    proof: list[bytes] = []
    lo, hi, m, complete = 0, n, first, True
    while True:  # SUBPROOF(m, D[lo:hi], complete), iteratively; appended outermost first
        if m == hi - lo:
            if not complete:
                proof.append(_mth(leaves, lo, hi))
            break
        k = split(hi - lo)
        if m <= k:
            proof.append(_mth(leaves, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_mth(leaves, lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    return proof[::-1]
