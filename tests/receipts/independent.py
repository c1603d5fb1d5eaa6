"""Checking a receipt WITHOUT askd's own code: ``cryptography`` for the
Ed25519 signature, ``rfc8785`` and ``hashlib`` for the digest, base64 and
json by hand. The wire tests use this, so a receipt askd's verify accepts
by mistake still fails here."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def b64(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def check(receipt: str, jwks: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, claims) once the signature holds under the JWKS key named by
    ``kid``; raises (InvalidSignature, StopIteration) otherwise."""
    head, body, sig = receipt.split(".")
    header = json.loads(b64(head))
    assert header["alg"] == "EdDSA"
    jwk = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["use"]) == ("OKP", "Ed25519", "EdDSA", "sig")
    Ed25519PublicKey.from_public_bytes(b64(jwk["x"])).verify(b64(sig), f"{head}.{body}".encode("ascii"))
    return header, json.loads(b64(body))


def digest_of(content: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(content)).hexdigest()


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: the required members, sorted, no whitespace, SHA-256, base64url."""
    required = json.dumps({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(required.encode()).digest()).rstrip(b"=").decode()


def js_int(text: str) -> int | float:
    """An integer as JSON.parse reads it: a double beyond 2**53."""
    value = int(text)
    return value if abs(value) <= 2**53 - 1 else float(value)


def js_parse(text: str) -> Any:
    """JSON as a JavaScript verifier holds it (what RFC 8785 canonicalises)."""
    return json.loads(text, parse_int=js_int)


def receipted(result: Any) -> dict[str, Any]:
    """An ended result without its ``receipt``, once the receipt is there and
    names this very result (its signature is the receipts tests' to check)."""
    out = dict(result)
    _, body, _ = out.pop("receipt").split(".")
    claims = json.loads(b64(body))
    assert (claims["sid"], claims["rid"], claims["status"]) == (out["sessionId"], out["requestId"], out["status"])
    return out
