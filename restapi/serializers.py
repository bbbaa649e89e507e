"""The envelopes of /api/v1 answers (`{data, meta}`), declared for the OpenAPI document; the
items inside them are the dataset's shapes (startups/serializers.py)."""

from rest_framework import serializers

from quota.plans import FREE, PRO
from startups.serializers import (
    SnapshotSerializer,
    StartupDetailSerializer,
    StartupListSerializer,
    text,
    timestamp,
    whole,
)
from transparency.serializers import LoggedAttestationSerializer


class QuotaMetaSerializer(serializers.Serializer):
    limit = whole(help_text="Records included this month.")
    used = whole()
    remaining = whole()
    resets_at = timestamp(help_text="1st of next month, 00:00 UTC.")


class StartupPageMetaSerializer(serializers.Serializer):
    total = whole(help_text="Matching startups across all pages.")
    page = whole(null=True, help_text="Current page; null when paging by `cursor`.")
    limit = whole(help_text="Results per page actually applied.")
    has_more = serializers.BooleanField(help_text="True while more pages follow.")
    plan = serializers.ChoiceField(choices=[FREE.name, PRO.name])
    max_limit = whole(help_text="Most records one request can return on the plan.")
    quota = QuotaMetaSerializer(required=False, help_text="Free plan only.")
    notice = text(
        required=False,
        help_text="Only when `limit` was lowered to the plan maximum or to the records left.",
    )
    warnings = serializers.ListField(
        child=text(),
        required=False,
        help_text="Only when something the request sent was ignored: one sentence per unknown "
        "query parameter, invalid value (an unknown `sort` included) or unknown `fields` name. "
        "The request is still answered (invalid parameters are never errors).",
    )
    next_cursor = text(
        null=True,
        help_text="Send as `cursor` for the next page (cursor paging); null on the last page.",
    )


class StartupPageSerializer(serializers.Serializer):
    """GET /api/v1/startups: `{data, meta}` (declared for the OpenAPI document)."""

    data = StartupListSerializer(many=True)
    meta = StartupPageMetaSerializer()


class CategoryCountSerializer(serializers.Serializer):
    name = text(
        source="category",
        help_text="A primary category, as startups give it (`category=` matches it).",
    )
    count = whole(help_text="Published startups with this primary category.")


class CategoryListSerializer(serializers.Serializer):
    """GET /api/v1/categories: `{data}` (declared for the OpenAPI document)."""

    data = CategoryCountSerializer(many=True)


class StartupEnvelopeSerializer(serializers.Serializer):
    """GET /api/v1/startups/{slug}: `{data}` (declared for the OpenAPI document)."""

    data = StartupDetailSerializer()


class HistoryMetaSerializer(serializers.Serializer):
    slug = text()
    count = whole(help_text="Snapshots in `data`.")
    to = serializers.DateField(allow_null=True, help_text="The `to` bound applied (null: none).")
    plan = serializers.ChoiceField(choices=[FREE.name, PRO.name])
    max_limit = whole()
    quota = QuotaMetaSerializer(required=False, help_text="Free plan only.")

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = serializers.DateField(
            allow_null=True, help_text="The `from` bound applied (null: none)."
        )
        return fields


class HistoryPageSerializer(serializers.Serializer):
    """GET /api/v1/startups/{slug}/history: daily snapshots, oldest first."""

    data = SnapshotSerializer(many=True)
    meta = HistoryMetaSerializer()


class AttestationSerializer(LoggedAttestationSerializer):
    jws = text(
        help_text="Compact JWS (RFC 7515), EdDSA/Ed25519 (RFC 8037). Payload: `slug`, every field "
        "of the detail's `verification` object (camelCase, monthly rows included), "
        "`issuedAt`, and the JWT claims verifiers must check: `iss` (the service's address), "
        "`sub` (the slug), `iat` and `exp` (Unix seconds). Verify against "
        "/.well-known/jwks.json."
    )
    key_id = text(help_text="`kid` of the signing key in /.well-known/jwks.json.")


class AttestationEnvelopeSerializer(serializers.Serializer):
    data = AttestationSerializer()
