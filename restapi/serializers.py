"""The unmetered envelopes of /api/v1 answers (`{data}`), declared for the OpenAPI document; the
items inside them are the dataset's shapes (startups/serializers.py). The metered ones, with a
`meta`, are restapi/shapes.py."""

from rest_framework import serializers

from startups.serializers import StartupDetailSerializer, text, whole
from transparency.serializers import LoggedAttestationSerializer


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
