"""The Merkle arithmetic of the transparency log against RFC 6962's published test
vectors (the Certificate Transparency reference vectors), for both sides: the server's tree
and proofs (transparency/merkle.py) and the official client's verifiers (openstartup.verify,
written separately from the RFC), plus every proof of every small tree cross-checked."""

import hashlib

import pytest

from tests.support.client_verify import verify
from transparency import merkle

h = bytes.fromhex

LEAVES = [
    h(x)
    for x in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# ROOTS[n - 1]: the root of the tree of the first n leaves.
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
# (leaf index, tree size, audit path)
INCLUSION = [
    (0, 1, []),
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
# (first size, second size, consistency proof)
CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
HASHES = [merkle.leaf_hash(leaf) for leaf in LEAVES]


def test_the_empty_tree_and_every_size_give_the_published_roots():
    assert merkle.root([]).hex() == EMPTY_ROOT
    assert [merkle.root(HASHES[:n]).hex() for n in range(1, 9)] == ROOTS
    # The prefixes the RFC fixes: the one-leaf root is SHA-256(0x00 || ""), and two leaves
    # join as SHA-256(0x01 || left || right).
    assert HASHES[0] == hashlib.sha256(b"\x00").digest()
    assert hashlib.sha256(b"\x01" + HASHES[0] + HASHES[1]).hexdigest() == ROOTS[1]


def test_the_split_is_the_largest_power_of_two_below_n_not_the_midpoint():
    wanted = {2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 8: 4, 9: 8, 1000: 512, 2**40 + 1: 2**40}
    assert {n: merkle.split(n) for n in wanted} == wanted


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION)
def test_published_inclusion_paths(index, size, path):
    assert [node.hex() for node in merkle.inclusion_path(index, HASHES[:size])] == path
    root = h(ROOTS[size - 1])
    nodes = [h(node) for node in path]
    assert verify.verify_inclusion_proof(HASHES[index], index, size, nodes, root)
    # Wrong index, size, leaf or root, and a proof with a node added, removed or flipped: no.
    probes = [
        (HASHES[index], index + 1, size, nodes, root),
        (HASHES[index], index ^ 2, size, nodes, root),
        (HASHES[index], index, size * 2, nodes, root),
        (HASHES[index], index, size // 2, nodes, root),
        (merkle.leaf_hash(b"WrongLeaf"), index, size, nodes, root),
        (HASHES[index], index, size, nodes, h(EMPTY_ROOT)),
        (HASHES[index], index, size, [*nodes, root], root),
        (HASHES[index], index, size, [root, *nodes], root),
        (HASHES[index], index, size, nodes[:-1], root) if nodes else None,
    ]
    for i in range(len(nodes)):
        flipped = list(nodes)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        probes.append((HASHES[index], index, size, flipped, root))
    for probe in filter(None, probes):
        assert not verify.verify_inclusion_proof(*probe), probe[1:3]


@pytest.mark.parametrize(("first", "second", "proof"), CONSISTENCY)
def test_published_consistency_proofs(first, second, proof):
    produced = merkle.consistency_proof(first, HASHES[:second])
    assert [node.hex() for node in produced] == proof
    old, new = h(ROOTS[first - 1]), h(ROOTS[second - 1])
    nodes = [h(node) for node in proof]
    assert verify.verify_consistency_proof(first, second, old, new, nodes)
    if not nodes:
        return
    probes = [
        (first + 1, second, old, new, nodes),
        (first ^ 2, second, old, new, nodes),
        (first, second * 2, old, new, nodes),
        (first, second, h(EMPTY_ROOT), new, nodes),
        (first, second, old, h(EMPTY_ROOT), nodes),
        (first, second, new, old, nodes),
        (first, second, old, new, []),
        (first, second, old, new, [*nodes, old]),
        (first, second, old, new, [new, *nodes]),
        (first, second, old, new, nodes[:-1]),
    ]
    for i in range(len(nodes)):
        flipped = list(nodes)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        probes.append((first, second, old, new, flipped))
    for probe in probes:
        if probe[0] > 0 and probe[0] <= probe[1]:
            assert not verify.verify_consistency_proof(*probe), probe[:2]


def test_every_proof_of_every_tree_up_to_40_leaves_verifies_with_the_client():
    hashes = [merkle.leaf_hash(bytes([i, i * 7 % 256])) for i in range(40)]
    roots = [merkle.root(hashes[:n]) for n in range(41)]
    for n in range(1, 41):
        for i in range(n):
            path = merkle.inclusion_path(i, hashes[:n])
            assert verify.verify_inclusion_proof(hashes[i], i, n, path, roots[n]), (i, n)
            assert not verify.verify_inclusion_proof(hashes[i], i, n, path, roots[n - 1] or b"")
        for m in range(1, n + 1):
            proof = merkle.consistency_proof(m, hashes[:n])
            assert verify.verify_consistency_proof(m, n, roots[m], roots[n], proof), (m, n)
            if m < n:  # a changed leaf before m is caught
                other = roots[m][:-1] + bytes([roots[m][-1] ^ 1])
                assert not verify.verify_consistency_proof(m, n, other, roots[n], proof)


def test_out_of_range_requests_are_refused():
    with pytest.raises(ValueError):
        merkle.inclusion_path(3, HASHES[:3])
    with pytest.raises(ValueError):
        merkle.consistency_proof(0, HASHES[:3])
    with pytest.raises(ValueError):
        merkle.consistency_proof(4, HASHES[:3])
    assert not verify.verify_inclusion_proof(HASHES[0], 0, 0, [], h(EMPTY_ROOT))
    assert not verify.verify_consistency_proof(2, 1, h(ROOTS[1]), h(ROOTS[0]), [])
