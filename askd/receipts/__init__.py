"""Receipts (protocol section 16): a signed statement of how a question, or
later an approval, ended, that whoever acts on it can check offline.

A receipt is a compact JWS (``alg`` EdDSA, Ed25519) whose payload names the
result and carries ``digest``, the SHA-256 of the RFC 8785 canonical JSON of
what was decided (:func:`digest`). The daemon signs (``askd.server.http.receipting``);
anyone verifies with the public keys askd publishes at
``/.well-known/jwks.json`` (:func:`verify`), and the audit trail's signed
head the same way (:func:`verify_head`, protocol section 19).

This package imports neither Tornado nor askd's configuration: a client or
an executor checks receipts without loading the daemon.
"""

from askd.receipts.payload import receipt_claims
from askd.receipts.digest import approval_content, digest, questions_content
from askd.receipts.jws import ReceiptError, sign, verify, verify_head
from askd.receipts.keys import KeyFileError, Keyring, derive_key, key_id, keyring

__all__ = [
    "KeyFileError",
    "Keyring",
    "ReceiptError",
    "approval_content",
    "derive_key",
    "digest",
    "key_id",
    "keyring",
    "questions_content",
    "receipt_claims",
    "sign",
    "verify",
    "verify_head",
]
