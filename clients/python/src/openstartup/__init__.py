"""Official Python client of the OpenStartup startup revenue data API.

import openstartup

client = openstartup.Client(base_url="http://127.0.0.1:8000", api_key="osk_...")
for startup in client.startups.list(sort="mrr-desc", max_items=10):
    print(startup["name"], startup["revenue"]["mrr"])
"""

from openstartup.attestation import AttestationError, verify_attestation
from openstartup.client import Client, ExportIterator, StartupIterator
from openstartup.errors import (
    APIConnectionError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OpenStartupError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from openstartup.models import (
    Attestation,
    DetailRevenue,
    Founder,
    HistoryPoint,
    ListRevenue,
    MonthlyRevenue,
    PageMeta,
    ProviderAccount,
    Quota,
    Social,
    Startup,
    StartupDetail,
    StartupPage,
    Verification,
)

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "Attestation",
    "AttestationError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "DetailRevenue",
    "ExportIterator",
    "Founder",
    "HistoryPoint",
    "ListRevenue",
    "MonthlyRevenue",
    "NotFoundError",
    "OpenStartupError",
    "PageMeta",
    "PermissionDeniedError",
    "ProviderAccount",
    "Quota",
    "RateLimitError",
    "ServerError",
    "Social",
    "Startup",
    "StartupDetail",
    "StartupIterator",
    "StartupPage",
    "Verification",
    "verify_attestation",
]
