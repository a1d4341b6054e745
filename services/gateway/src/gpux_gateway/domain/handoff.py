"""The access handoff (pure): what a lease's seller hands its buyer, how it is encoded for
sealing, the keys that seal it, and when a report goes to billing.

The details are either an SSH login (``host``, ``port``, ``user``) or an ``endpoint_url``
(a notebook, a web console), with optional ``notes``. They are secrets: nothing here puts
them into a message or a ``repr`` (an ``AccessDetailsError`` names the field, never its
value), and the adapter that seals them (``adapters.access_cipher``, AES-GCM) sees only the
bytes ``encode`` makes. Keys come as ``GPUX_ACCESS_KEYS``: ``kid:base64(32 bytes)``,
comma-separated; the first seals, every one opens (``parse_keyring``).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from gpux_contracts.leases import LeaseStatus

MAX_NOTES = 2000
"""The longest ``notes`` accepted (characters)."""
MAX_URL = 2048
KEY_BYTES = 32
"""AES-256: every access key is 32 bytes."""
ENCODING_VERSION = 1
"""The version ``encode`` writes into the sealed bytes (``decode`` refuses any other)."""

_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)"
    r"(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$"
)
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
_KEY_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class AccessDetailsError(ValueError):
    """Why posted access details are refused (a 422): names the field, never its value."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True, slots=True)
class AccessDetails:
    """How the buyer reaches the leased machines: an SSH login or an endpoint URL, and notes.

    Its ``repr`` shows no value (a traceback or a log line of it leaks nothing).
    """

    host: str | None = field(default=None, repr=False)
    port: int | None = field(default=None, repr=False)
    user: str | None = field(default=None, repr=False)
    endpoint_url: str | None = field(default=None, repr=False)
    notes: str = field(default="", repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The details as the buyer reads them (``GET /v1/leases/{id}/access``)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "endpoint_url": self.endpoint_url,
            "notes": self.notes,
        }


def _host(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not _HOSTNAME.match(host):
        raise AccessDetailsError("host", "a host name or an IP address")
    return host.lower()


def _url(url: str) -> str:
    if len(url) > MAX_URL or _CONTROL.search(url) or any(c.isspace() for c in url):
        raise AccessDetailsError("endpoint_url", f"a URL of at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        raise AccessDetailsError("endpoint_url", "a malformed URL") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise AccessDetailsError("endpoint_url", "an https (or http) URL with a host")
    return url


def _ssh(host: str | None, port: int | None, user: str | None) -> tuple[str, int, str]:
    if host is None or port is None or user is None:
        raise AccessDetailsError("host", "host, port and user go together")
    if not 1 <= port <= 65535:
        raise AccessDetailsError("port", "a port from 1 to 65535")
    if not _USER.match(user):
        raise AccessDetailsError("user", "a login name (letters, digits, '.', '_', '-'; <= 64)")
    return _host(host), port, user


def access_details(
    *,
    host: str | None = None,
    port: int | None = None,
    user: str | None = None,
    endpoint_url: str | None = None,
    notes: str = "",
) -> AccessDetails:
    """Posted details, checked: ``host`` + ``port`` + ``user`` or ``endpoint_url`` (not both),
    ``notes`` at most ``MAX_NOTES`` characters; else an ``AccessDetailsError``."""
    if len(notes) > MAX_NOTES:
        raise AccessDetailsError("notes", f"at most {MAX_NOTES} characters")
    if _CONTROL.search(notes):
        raise AccessDetailsError("notes", "no control characters (but tab and newlines)")
    ssh_given = host is not None or port is not None or user is not None
    if endpoint_url is not None:
        if ssh_given:
            raise AccessDetailsError("endpoint_url", "either host, port and user or endpoint_url")
        return AccessDetails(endpoint_url=_url(endpoint_url), notes=notes)
    if not ssh_given:
        raise AccessDetailsError("host", "give host, port and user, or endpoint_url")
    checked_host, checked_port, checked_user = _ssh(host, port, user)
    return AccessDetails(host=checked_host, port=checked_port, user=checked_user, notes=notes)


def encode(details: AccessDetails) -> bytes:
    """The bytes that are sealed: compact JSON with a version, keys sorted."""
    document = {"v": ENCODING_VERSION, **details.as_dict()}
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


class AccessDecodeError(ValueError):
    """Opened bytes that are no encoding of access details (says nothing of their content)."""


def decode(data: bytes) -> AccessDetails:
    """The details ``encode`` made these bytes of; an ``AccessDecodeError`` for anything else."""
    try:
        document = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        raise AccessDecodeError("not an encoding of access details") from None
    if not isinstance(document, dict) or document.get("v") != ENCODING_VERSION:
        raise AccessDecodeError("an unknown encoding of access details")
    try:
        return AccessDetails(
            host=document["host"],
            port=document["port"],
            user=document["user"],
            endpoint_url=document["endpoint_url"],
            notes=document["notes"],
        )
    except KeyError:
        raise AccessDecodeError("an incomplete encoding of access details") from None


@dataclass(frozen=True, slots=True)
class Sealed:
    """Sealed details as stored: the key that sealed them, its nonce and the ciphertext (with
    its tag)."""

    key_id: str
    nonce: bytes = field(repr=False)
    ciphertext: bytes = field(repr=False)


class AccessUnreadable(Exception):
    """Sealed details that cannot be opened: an unknown key id, a tampered ciphertext, or
    another lease's (the message names the key id, nothing of the content)."""


class AccessKeyError(ValueError):
    """A malformed ``GPUX_ACCESS_KEYS`` (says which entry, never a key)."""


def parse_keyring(text: str) -> tuple[tuple[str, bytes], ...]:
    """``kid:base64(32 bytes)`` entries, comma-separated, as (key id, key) pairs in order:
    the first seals, every one opens. Key ids are unique; at least one key."""
    keys: list[tuple[str, bytes]] = []
    for position, entry in enumerate(e.strip() for e in text.split(",")):
        kid, sep, encoded = entry.partition(":")
        if not sep or not _KEY_ID.match(kid):
            raise AccessKeyError(
                f"entry {position + 1}: 'kid:base64', a kid of [A-Za-z0-9_-]{{1,32}}"
            )
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise AccessKeyError(f"key {kid}: not base64") from None
        if len(key) != KEY_BYTES:
            raise AccessKeyError(f"key {kid}: {KEY_BYTES} bytes are needed")
        if any(kid == held for held, _ in keys):
            raise AccessKeyError(f"key {kid}: named twice")
        keys.append((kid, key))
    return tuple(keys)


def erasable_before(now: datetime, retention_s: int) -> datetime:
    """Details of leases that ended or failed before this instant are erased."""
    return now - timedelta(seconds=retention_s)


def access_refusal(status: LeaseStatus) -> LeaseStatus | None:
    """Why access may not be posted for a lease showing ``status`` (409): it failed or ended."""
    return status if status in (LeaseStatus.FAILED, LeaseStatus.ENDED) else None


def reports_ready(stored_status: str) -> bool:
    """Whether posting access reports the lease ready to billing: only while the view shows
    it provisioning (posting again once it runs just replaces the details)."""
    return stored_status == LeaseStatus.PROVISIONING


def may_report_failure(stored_status: str) -> bool:
    """Whether the seller may report a failure: only while the lease provisions."""
    return stored_status == LeaseStatus.PROVISIONING
