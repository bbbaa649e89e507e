"""Declared shapes of the /api/v1/log answers (snake_case here; the REST renderer camelizes)."""

from rest_framework import serializers

HEX = "Lowercase hex of a SHA-256 hash (64 characters)."


class TreeHeadSerializer(serializers.Serializer):
    tree_size = serializers.IntegerField(min_value=0, help_text="Leaves the head covers.")
    timestamp = serializers.CharField(help_text="When it was signed (ISO 8601 UTC, ms, Z).")
    sha256_root_hash = serializers.CharField(help_text="RFC 6962 MTH of the leaves. " + HEX)
    signature = serializers.CharField(
        help_text="Compact JWS (EdDSA/Ed25519, header `typ` `openstartup-tree-head+jwt`) whose "
        "payload is `{treeSize, timestamp, sha256RootHash}`; the signed values are the ones to "
        "trust. Verify against /.well-known/jwks.json."
    )
    key_id = serializers.CharField(help_text="`kid` of the signing key in the JWKS.")


class TreeHeadEnvelopeSerializer(serializers.Serializer):
    data = TreeHeadSerializer()


class LogEntrySerializer(serializers.Serializer):
    leaf_index = serializers.IntegerField(min_value=0)
    leaf_hash = serializers.CharField(help_text="SHA-256(0x00 || entry). " + HEX)
    entry = serializers.CharField(
        help_text="The leaf's exact bytes, base64 (RFC 4648 section 4): canonical JSON (UTF-8, "
        "keys sorted, no spaces) of the statement: `slug`, the attested figures, `logIndex`, "
        "`loggedAt`."
    )


class LogEntriesMetaSerializer(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0, help_text="Last index returned (inclusive).")
    tree_size = serializers.IntegerField(min_value=0, help_text="The latest tree head's size.")


class LogEntriesSerializer(serializers.Serializer):
    data = LogEntrySerializer(many=True)
    meta = LogEntriesMetaSerializer()


class InclusionProofSerializer(serializers.Serializer):
    leaf_index = serializers.IntegerField(min_value=0)
    tree_size = serializers.IntegerField(min_value=1)
    leaf_hash = serializers.CharField(help_text=HEX)
    audit_path = serializers.ListField(
        child=serializers.CharField(), help_text="RFC 6962 PATH(leafIndex, D[treeSize]), hex."
    )


class InclusionProofEnvelopeSerializer(serializers.Serializer):
    data = InclusionProofSerializer()


class ConsistencyProofSerializer(serializers.Serializer):
    first = serializers.IntegerField(min_value=1)
    second = serializers.IntegerField(min_value=1)
    consistency = serializers.ListField(
        child=serializers.CharField(), help_text="RFC 6962 PROOF(first, D[second]), hex."
    )


class ConsistencyProofEnvelopeSerializer(serializers.Serializer):
    data = ConsistencyProofSerializer()


class LoggedAttestationSerializer(serializers.Serializer):
    """The fields an attestation answer adds for the transparency log (startups.serializers'
    AttestationSerializer extends this)."""

    leaf_index = serializers.IntegerField(
        help_text="Index of the attested statement's leaf in the transparency log (also the "
        "signed `logIndex` claim; `loggedAt` says when the statement was first logged)."
    )
    log_entry = serializers.CharField(
        help_text="The leaf's exact bytes, base64: canonical JSON of `slug`, the attested "
        "figures (all but `status`, `lastSyncedAt`, `verifiedAt` and `methodology`), "
        "`logIndex` and `loggedAt`; each of its values equals the JWS claim of that name."
    )
    tree_head = TreeHeadSerializer(help_text="The latest signed tree head.")
    inclusion_proof = serializers.ListField(
        child=serializers.CharField(),
        help_text="RFC 6962 audit path of the leaf up to `treeHead` (hex).",
    )
