"""Signing a receipt, and checking one (or an audit head's signature):
compact JWS, ``alg`` EdDSA only.

``signed_claims`` trusts nothing in the header but ``kid``, which picks
the key from the JWKS given; the algorithm is pinned to EdDSA, so a header
naming another (``none``, ``HS256`` with the public key as secret) fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jwt
from jwt.algorithms import OKPAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from askd.receipts.digest import approval_content, digest
from askd.receipts.keys import ALG, Keyring

# The members every receipt carries (approvals add approved, scope, approvals, approvalsVia).
REQUIRED = ("iss", "iat", "sid", "rid", "status", "digest", "endedAt")
# What an audit head's signature signs (protocol section 19).
HEAD_CLAIMS = ("seq", "hash", "at")


class ReceiptError(Exception):
    """The receipt does not hold: one line saying why."""


def sign(claims: Mapping[str, Any], keys: Keyring) -> str:
    """The compact JWS of ``claims`` under the signing key. Ed25519 is
    deterministic: the same claims and key give the same receipt."""
    return jwt.encode(dict(claims), keys.signing, algorithm=ALG, headers={"kid": keys.kid})


def _key_for(kid: str, jwks: Mapping[str, Any]) -> Ed25519PublicKey:
    keys = jwks.get("keys") if isinstance(jwks, Mapping) else None
    if not isinstance(keys, list):
        raise ReceiptError('the JWKS is not {"keys": [...]}')
    for jwk in keys:
        if isinstance(jwk, Mapping) and jwk.get("kid") == kid:
            if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or jwk.get("alg", ALG) != ALG:
                raise ReceiptError(f"key {kid} in the JWKS is not an Ed25519 (EdDSA) key")
            try:
                key = OKPAlgorithm.from_jwk(dict(jwk))
            except (jwt.InvalidKeyError, ValueError, TypeError):
                raise ReceiptError(f"key {kid} in the JWKS is malformed") from None
            if not isinstance(key, Ed25519PublicKey):
                raise ReceiptError(f"key {kid} in the JWKS is not an Ed25519 public key")
            return key
    raise ReceiptError(f"unknown kid {kid}: no key in the JWKS has it")


def signed_claims(token: str, jwks: Mapping[str, Any], what: str = "receipt") -> dict[str, Any]:
    """The claims of a compact JWS askd signed (a receipt, an audit head's
    ``signature``), once its signature holds under the JWKS key its ``kid``
    names; ``what`` names it in the errors. Raises :class:`ReceiptError`."""
    if not isinstance(token, str):
        raise ReceiptError(f"a {what} is a compact JWS string")
    token = token.strip()
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError:
        raise ReceiptError("not a compact JWS") from None
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise ReceiptError(f"the {what}'s header names no kid")
    if header.get("alg") != ALG:
        raise ReceiptError(f"bad signature: alg {header.get('alg')!r}, not {ALG}")
    if "crit" in header:  # no extension is understood: RFC 7515 says refuse
        raise ReceiptError(f"the {what}'s header has crit extensions askd does not know")
    key = _key_for(kid, jwks)
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[ALG],
            # Neither a receipt nor a head expires; iat is the end time, and a
            # verifier's clock behind the signer's must not refuse it.
            options={"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False, "verify_iss": False},
        )
    except jwt.InvalidSignatureError:
        raise ReceiptError("bad signature") from None
    except jwt.InvalidTokenError as err:
        raise ReceiptError(f"bad signature: {err}") from None
    return claims


def verify(receipt: str, jwks: Mapping[str, Any], action: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The receipt's claims, once its signature holds under the JWKS key its
    ``kid`` names. With ``action`` (``{"name", "arguments"}``: what an
    executor is about to run), also that the receipt says approved and that
    its digest is that of this action with the receipt's ``scope``.
    Raises :class:`ReceiptError`."""
    claims = signed_claims(receipt, jwks)
    missing = [name for name in REQUIRED if name not in claims]
    if missing:
        raise ReceiptError(f"not an askd receipt: no {', '.join(missing)}")
    if action is not None:
        check_action(claims, action)
    return claims


def verify_head(head: Mapping[str, Any], jwks: Mapping[str, Any]) -> dict[str, Any]:
    """An audit head's (protocol section 19: ``{"seq", "hash", "at",
    "signature"}``) signed claims, once its signature holds under the JWKS
    and signs exactly its ``seq``, ``hash`` and ``at``: what is trusted of
    a head is what was signed. Raises :class:`ReceiptError`."""
    if not isinstance(head, Mapping) or "signature" not in head:
        raise ReceiptError("the head carries no signature")
    claims = signed_claims(head["signature"], jwks, "head")
    for name in HEAD_CLAIMS:
        if name not in claims:
            raise ReceiptError(f"not an askd audit head: its signature signs no {name}")
        if head.get(name) != claims[name] or type(head.get(name)) is not type(claims[name]):
            raise ReceiptError(f"the head's {name} is not the one its signature signs")
    return claims


def check_action(claims: Mapping[str, Any], action: Mapping[str, Any]) -> None:
    """That verified ``claims`` approve exactly ``action``."""
    if not isinstance(action, Mapping) or not isinstance(action.get("name"), str) or "arguments" not in action:
        raise ReceiptError('the action is not {"name": ..., "arguments": ...}')
    if claims.get("approved") is not True:
        raise ReceiptError("not approved")
    if digest(approval_content(action, claims.get("scope"))) != claims["digest"]:
        raise ReceiptError("digest mismatch: the receipt is for another action or other arguments")
