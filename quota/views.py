"""The base of every /api/v1 view, shared by the REST surface and the apps below it that
serve /api/v1 paths of their own (the transparency log, webhook endpoints)."""

from rest_framework.views import APIView

from core.cycles import ReleasesCycles
from core.openapi import DocumentedOptions
from core.renderers import CamelCaseJSONRenderer
from quota.headers import QuotaHeadersMixin


class RestView(ReleasesCycles, QuotaHeadersMixin, DocumentedOptions, APIView):
    """A /api/v1 endpoint: camelCase JSON, the quota headers, documented OPTIONS, freed by
    reference counting once written (core/cycles.py)."""

    renderer_classes = [CamelCaseJSONRenderer]
