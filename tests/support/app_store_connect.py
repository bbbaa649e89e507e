"""App Store Connect's test credential (an ES256 key made per run) and rows of Apple's report
formats (Summary Sales Report 1_1, Subscription Report 1_3), for the provider's tests and the
browser test that connects it."""

import json

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

KEY_ID = "2X9R4HXF34"
ISSUER = "57246542-96fe-1a63-e053-0824d011072a"
VENDOR = "85012345"
PRIVATE = ec.generate_private_key(ec.SECP256R1())
PEM = PRIVATE.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()


def credential(**change) -> str:
    parts = {"key_id": KEY_ID, "issuer_id": ISSUER, "private_key": PEM, "vendor_number": VENDOR}
    return json.dumps({**parts, **change})


def sale(units: int, proceeds: str, currency="USD", kind="IAY", **extra) -> dict:
    return {
        "Provider": "APPLE", "Provider Country": "US", "SKU": "pro.monthly", "Developer": "Acme",
        "Title": "Acme Pro", "Version": "", "Product Type Identifier": kind, "Units": units,
        "Developer Proceeds": proceeds, "Begin Date": "11/01/2026", "End Date": "11/01/2026",
        "Customer Currency": currency, "Country Code": "US", "Currency of Proceeds": currency,
        "Apple Identifier": "1234567890", "Customer Price": proceeds, "Promo Code": "",
        "Parent Identifier": "", "Subscription": "Renewal" if kind == "IAY" else "",
        "Period": "1 Month" if kind == "IAY" else "", "Category": "Productivity", "CMB": "",
        "Device": "iPhone", "Supported Platforms": "iOS", "Proceeds Reason": "",
        "Preserved Pricing": "", "Client": "", "Order Type": "", **extra,
    }  # fmt: skip


def subscription(duration: str, proceeds: str, standard: int, currency="USD", **counts) -> dict:
    return {
        "App Name": "Acme", "App Apple ID": "1234567890", "Subscription Name": duration,
        "Subscription Apple ID": "6444", "Subscription Group ID": "2100",
        "Standard Subscription Duration": duration, "Subscription Offer Name": "",
        "Promotional Offer ID": "", "Customer Price": proceeds, "Customer Currency": currency,
        "Developer Proceeds": proceeds, "Proceeds Currency": currency, "Preserved Pricing": "",
        "Proceeds Reason": "", "Client": "", "Device": "iPhone", "State": "", "Country": "US",
        "Active Standard Price Subscriptions": standard, **counts,
    }  # fmt: skip
