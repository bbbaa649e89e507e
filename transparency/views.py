"""GET /api/v1/log/...: the transparency log (RFC 6962 style). Public, no allowance spent."""

import base64
import re

from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import InvalidParameter
from core.openapi import INVALID_PARAMETER, rest_operation
from quota.callers import request_caller
from quota.views import RestView
from transparency.serializers import (
    ConsistencyProofEnvelopeSerializer,
    InclusionProofEnvelopeSerializer,
    LogEntriesSerializer,
    TreeHeadEnvelopeSerializer,
)
from transparency.services import (
    MAX_ENTRIES,
    LogRangeError,
    consistency_proof,
    inclusion_proof,
    leaf_hash_at,
    leaf_index_of,
    log_entries,
    log_size,
    tree_head_at,
    tree_head_data,
    tree_head_latest,
    tree_head_sign,
)

_DIGITS = re.compile(r"[0-9]{1,18}")
_HEX_HASH = re.compile(r"[0-9a-fA-F]{64}")
_ERRORS = (400, INVALID_PARAMETER, 401, 405, 500)


def _whole(request: Request, name: str) -> int:
    """A required non-negative integer query parameter."""
    value = request.query_params.get(name)
    if value is None or value == "":
        raise InvalidParameter(f"`{name}` is required (a whole number).")
    if not _DIGITS.fullmatch(value):
        raise InvalidParameter(f"`{name}` must be a whole number from 0 to 10^18 - 1.")
    return int(value)


def _proof_or_400(compute):
    try:
        return compute()
    except LogRangeError as error:
        raise InvalidParameter(str(error)) from None


_MAX = 10**18 - 1


def _number(name: str, description: str, *, minimum: int = 0) -> OpenApiParameter:
    schema = {"type": "integer", "minimum": minimum, "maximum": _MAX}
    return OpenApiParameter(name, schema, required=True, description=description)


class LogView(RestView):
    def check_caller(self, request: Request) -> None:
        request_caller(request)  # a wrong key is still a 401


class TreeHeadView(LogView):
    @rest_operation(
        operation_id="getLogTreeHead",
        summary="Latest signed tree head of the transparency log",
        description="The newest signed tree head (STH): the log's size, its RFC 6962 root hash "
        "and an Ed25519 JWS over both, signed with the attestation key (JWKS). Every head ever "
        "published is kept: `treeSize` asks for the one of that size (one is signed per size "
        "the log reached; 400 `invalid_parameter` for a size never published), and consistency "
        "proofs go between any two sizes. Free of charge.",
        parameters=(
            OpenApiParameter(
                "treeSize",
                {"type": "integer", "minimum": 0, "maximum": _MAX},
                description="A past size: its signed head instead of the latest.",
            ),
        ),
        ok=TreeHeadEnvelopeSerializer,
        errors=_ERRORS,
        metered=False,
    )
    def get(self, request: Request) -> Response:
        self.check_caller(request)
        if "treeSize" in request.query_params:
            head = tree_head_at(_whole(request, "treeSize"))
            if head is None:
                raise InvalidParameter("No tree head of that size was published.")
            return Response({"data": tree_head_data(head)})
        head = tree_head_latest()
        if head is None:  # an empty log still has a signed head: size 0, SHA-256 of nothing
            try:
                with transaction.atomic():
                    head = tree_head_sign(size=0, now=timezone.now())
            except IntegrityError:
                head = tree_head_latest()
        return Response({"data": tree_head_data(head)})


class LogEntriesView(LogView):
    @rest_operation(
        operation_id="listLogEntries",
        summary="Leaves of the transparency log",
        description=f"Leaves `start` to `end` inclusive (as RFC 6962 get-entries), at most "
        f"{MAX_ENTRIES} per answer: `end` is lowered to fit and to the latest tree size; "
        "`meta.end` says where the answer stopped. `start` beyond the log, `end` before "
        "`start` or a non-numeric value: 400 `invalid_parameter`. Free of charge.",
        parameters=(
            _number("start", "First leaf index (0-based)."),
            _number("end", "Last leaf index wanted (inclusive)."),
        ),
        ok=LogEntriesSerializer,
        errors=_ERRORS,
        metered=False,
    )
    def get(self, request: Request) -> Response:
        self.check_caller(request)
        start, end = _whole(request, "start"), _whole(request, "end")
        if end < start:
            raise InvalidParameter("`end` must not be smaller than `start`.")
        rows = _proof_or_400(lambda: log_entries(start=start, end=end))
        data = [
            {
                "leaf_index": row.index,
                "leaf_hash": row.leaf_hash,
                "entry": base64.b64encode(bytes(row.entry)).decode(),
            }
            for row in rows
        ]
        meta = {"start": start, "end": rows[-1].index, "tree_size": log_size()}
        return Response({"data": data, "meta": meta})


class InclusionProofView(LogView):
    @rest_operation(
        operation_id="getLogInclusionProof",
        summary="Inclusion proof of a leaf",
        description="RFC 6962 audit path of a leaf in the tree of the first `treeSize` leaves: "
        "hash the leaf up the path and compare with that tree head's root. `leaf` is a leaf "
        "index or a leaf hash (64 hex); `treeSize` is between 1 and the latest head's size and "
        "larger than the leaf index. Otherwise 400 `invalid_parameter`. Free of charge.",
        parameters=(
            OpenApiParameter(
                "leaf",
                {"type": "string", "pattern": "^([0-9]{1,18}|[0-9a-fA-F]{64})$"},
                required=True,
                description="Leaf index, or leaf hash in hex.",
            ),
            _number("treeSize", "Size of the tree head to prove inclusion in.", minimum=1),
        ),
        ok=InclusionProofEnvelopeSerializer,
        errors=_ERRORS,
        metered=False,
    )
    def get(self, request: Request) -> Response:
        self.check_caller(request)
        leaf = request.query_params.get("leaf") or ""
        if _HEX_HASH.fullmatch(leaf):
            index = leaf_index_of(leaf.lower())
            if index is None:
                raise InvalidParameter("No leaf of the log has that hash.")
        else:
            index = _whole(request, "leaf")
        tree_size = _whole(request, "treeSize")
        path = _proof_or_400(lambda: inclusion_proof(leaf_index=index, tree_size=tree_size))
        leaf_hash = leaf.lower() if _HEX_HASH.fullmatch(leaf) else leaf_hash_at(index)
        data = {
            "leaf_index": index,
            "tree_size": tree_size,
            "leaf_hash": leaf_hash,
            "audit_path": [node.hex() for node in path],
        }
        return Response({"data": data})


class ConsistencyProofView(LogView):
    @rest_operation(
        operation_id="getLogConsistencyProof",
        summary="Consistency proof between two tree sizes",
        description="RFC 6962 PROOF(first, D[second]): shows that the tree of `second` leaves "
        "extends the tree of `first` leaves unchanged (0 < first <= second <= the latest "
        "head's size; `first == second` gives an empty proof). Otherwise 400 "
        "`invalid_parameter`. Free of charge.",
        parameters=(
            _number("first", "The earlier tree size.", minimum=1),
            _number("second", "The later tree size.", minimum=1),
        ),
        ok=ConsistencyProofEnvelopeSerializer,
        errors=_ERRORS,
        metered=False,
    )
    def get(self, request: Request) -> Response:
        self.check_caller(request)
        first, second = _whole(request, "first"), _whole(request, "second")
        proof = _proof_or_400(lambda: consistency_proof(first=first, second=second))
        data = {"first": first, "second": second, "consistency": [node.hex() for node in proof]}
        return Response({"data": data})
