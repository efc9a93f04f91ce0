"""`X-T49-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeGuard

HEADER = "x-t49-webhook-signature"


def sign(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


_LOWER_HEX = frozenset(b"0123456789abcdef")


def well_formed(signature: bytes | None) -> TypeGuard[bytes]:
    """64 lowercase hex digits: the only form a signature can match (checked before the body is read)."""
    return signature is not None and len(signature) == 64 and _LOWER_HEX.issuperset(signature)


def verify(body: bytes, signature: bytes | None, secrets: Sequence[str]) -> int | None:
    """Index of the secret that signed `body`, or None. Every secret is tried, in constant time each.

    A malformed signature (wrong length, uppercase, not hex) simply matches no secret.
    """
    if not well_formed(signature):
        return None
    matched: int | None = None
    for index, secret in enumerate(secrets):
        expected = hmac.digest(secret.encode(), body, "sha256").hex().encode()
        if hmac.compare_digest(expected, signature) and matched is None:
            matched = index
    return matched
