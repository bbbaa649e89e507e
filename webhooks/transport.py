"""Sending one webhook request: where it may go (SSRF) and how long it may take.

Outside development, a delivery never reaches loopback, private, link-local, multicast,
reserved or unspecified addresses: the host is resolved once, EVERY address it resolves to is
checked, and the request connects to the checked address itself (the Host header and TLS
server name stay the endpoint's), so a DNS answer that changes between the check and the
connection (rebinding) cannot redirect it. WEBHOOKS_ALLOW_PRIVATE_ADDRESSES (never honoured in
production) lets tests and local development deliver to 127.0.0.1.
"""

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx
from django.conf import settings

# Connect and read, each; the whole attempt is bounded by these and the body cap.
TIMEOUT_SECONDS = 5.0
# Bytes of the receiver's answer kept (for the dashboard); the rest is never read.
BODY_CAP = 1024
USER_AGENT = "OpenStartup-Webhooks/1.0"


class UnsafeAddress(Exception):
    """The endpoint's host is, or resolves to, an address deliveries never go to."""


@dataclass(frozen=True)
class Outcome:
    status_code: int | None  # None: no HTTP answer (refused, timed out, unsafe address)
    error: str
    body: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def private_allowed() -> bool:
    return settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES and not settings.PRODUCTION


def address_refused(address: str) -> bool:
    """Whether deliveries may never go to this IP address (outside development)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified


def literal_refused(host: str) -> bool:
    """For registration: a host that is an IP literal deliveries would refuse, or localhost
    (no DNS is asked at registration; delivery checks every resolved address)."""
    if private_allowed():
        return False
    if host.rstrip(".").lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return address_refused(host.strip("[]"))
    except ValueError:
        return False


def resolve_checked(host: str, port: int) -> str:
    """One address of `host` to connect to; UnsafeAddress when any address it resolves to is
    refused (a name with one private address among public ones is refused as a whole)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise UnsafeAddress(f"the host does not resolve ({error.__class__.__name__})") from None
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise UnsafeAddress("the host does not resolve")
    if not private_allowed():
        refused = [address for address in addresses if address_refused(address)]
        if refused:
            raise UnsafeAddress(f"the host resolves to a refused address ({refused[0]})")
    return addresses[0]


def post(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST `body` to `url` at a checked address: no redirects followed, a short timeout, at
    most BODY_CAP bytes of the answer read."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        address = resolve_checked(host, port)
    except UnsafeAddress as error:
        return Outcome(None, str(error))
    literal = f"[{address}]" if ":" in address else address
    target = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path or "/", parts.query, ""))
    host_header = parts.netloc.rsplit("@", 1)[-1]
    request_headers = {
        **headers,
        "Host": host_header,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
    }
    extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
    timeout = httpx.Timeout(TIMEOUT_SECONDS)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            request = client.build_request(
                "POST", target, content=body, headers=request_headers, extensions=extensions
            )
            response = client.send(request, stream=True)
            deadline = time.monotonic() + TIMEOUT_SECONDS
            try:
                kept = b""
                for chunk in response.iter_raw():
                    kept += chunk
                    if len(kept) >= BODY_CAP or time.monotonic() > deadline:
                        break  # the status is what counts; a dripping body is not waited for
            finally:
                response.close()
            text = kept[:BODY_CAP].decode("utf-8", "replace")
            return Outcome(response.status_code, "", text)
    except httpx.TimeoutException:
        return Outcome(None, "timed out")
    except httpx.HTTPError as error:
        return Outcome(None, f"connection failed ({error.__class__.__name__})")
