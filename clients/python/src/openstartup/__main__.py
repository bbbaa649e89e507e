"""`python -m openstartup verify`: check saved attestations and tree heads offline.

    python -m openstartup verify attestation.json --jwks jwks.json
    python -m openstartup verify attestation.json --jwks jwks.json \\
        --tree-head today.json --consistency proof.json

`attestation.json` is the attestation answer (`{"data": {...}}` or its `data`); `today.json` a
later tree head (/api/v1/log/tree-head); `proof.json` the consistency proof between the two
(/api/v1/log/proof/consistency). Prints what was verified as JSON; exit status 0 when every
check passed, 1 when one failed (the reason on stderr), 2 for unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from openstartup.verify import VerificationError, verify_attestation, verify_consistency


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    if isinstance(document, dict) and isinstance(document.get("data"), dict):
        return document["data"]  # a whole API answer
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openstartup")
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="verify a saved attestation offline")
    verify.add_argument("attestation", help="the saved attestation answer (JSON)")
    verify.add_argument("--jwks", required=True, help="the saved /.well-known/jwks.json")
    verify.add_argument("--tree-head", help="a later signed tree head to check consistency with")
    verify.add_argument("--consistency", help="the consistency proof to that tree head")
    args = parser.parse_args(argv)
    if bool(args.tree_head) != bool(args.consistency):
        parser.error("--tree-head and --consistency go together")
    try:
        attestation, jwks = _load(args.attestation), _load(args.jwks)
        later = _load(args.tree_head) if args.tree_head else None
        proof = _load(args.consistency) if args.consistency else None
    except (OSError, ValueError) as error:
        print(f"cannot read input: {error}", file=sys.stderr)
        return 2
    try:
        checked = verify_attestation(attestation, jwks)
        report: dict[str, Any] = {
            "verified": True,
            "slug": checked.claims.get("slug"),
            "leafIndex": checked.leaf_index,
            "treeSize": checked.tree_head.tree_size,
            "treeHeadTimestamp": checked.tree_head.timestamp,
        }
        if later is not None:
            _, newer = verify_consistency(attestation["treeHead"], later, proof, jwks)
            report["consistentWithTreeSize"] = newer.tree_size
    except (VerificationError, KeyError, TypeError, AttributeError) as error:
        print(f"verification failed: {error}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
