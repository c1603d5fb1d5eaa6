"""The keys receipts are signed with, and the JWKS that publishes them.

By default the signing key is derived from the daemon's secret (HKDF-SHA256
with an ``info`` of its own): every node with the same ``auth.secret`` signs
alike, with no file to share. ``receipts.key_file`` names an Ed25519 private
key (PEM) instead; ``receipts.previous_key_files`` keep older public keys in
the JWKS so receipts they signed still verify.

``kid`` is the RFC 7638 JWK thumbprint of the public key (SHA-256, base64url):
it names the key itself, so it is the same wherever the key is.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PURPOSE = b"askd.receipt-signing-key"  # HKDF's info: this key signs receipts and nothing else
ALG = "EdDSA"


class KeyFileError(Exception):
    """A receipt key file is missing, unreadable or not an Ed25519 key:
    ``setting`` names the setting, ``detail`` what is wrong with the file."""

    def __init__(self, setting: str, detail: str) -> None:
        super().__init__(f"{setting}: {detail}")
        self.setting, self.detail = setting, detail


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def derive_key(secret: str) -> Ed25519PrivateKey:
    """The signing key of a daemon without a key file: from its secret."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE)
    return Ed25519PrivateKey.from_private_bytes(hkdf.derive(secret.encode("utf-8", "surrogatepass")))


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public: Ed25519PublicKey) -> str:
    """RFC 7638 thumbprint: SHA-256 of the required members (crv, kty, x) in
    canonical JSON, base64url without padding."""
    required = {"crv": "Ed25519", "kty": "OKP", "x": _b64url(_raw(public))}
    return _b64url(hashlib.sha256(rfc8785.dumps(required)).digest())


def public_jwk(public: Ed25519PublicKey) -> dict[str, str]:
    return {"kty": "OKP", "crv": "Ed25519", "x": _b64url(_raw(public)), "kid": key_id(public), "use": "sig", "alg": ALG}


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(what, f"{path} does not exist") from None
    except OSError as err:
        raise KeyFileError(what, f"{path} cannot be read: {err.strerror or err}") from None


def load_private(path: Path, what: str = "receipts.key_file") -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM file (PKCS#8, unencrypted)."""
    data = _read(path, what)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise KeyFileError(what, f"{path} is not an unencrypted PEM private key") from None
    except Exception as err:  # cryptography's UnsupportedAlgorithm and the like
        raise KeyFileError(what, f"{path} cannot be loaded: {err}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(what, f"{path} is not an Ed25519 key")
    return key


def load_public(path: Path, what: str = "receipts.previous_key_files") -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file holding the private or the public key."""
    data = _read(path, what)
    key: Any
    try:
        if b"PRIVATE KEY" in data:
            key = serialization.load_pem_private_key(data, password=None).public_key()
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise KeyFileError(what, f"{path} is not a PEM key (private, unencrypted, or public)") from None
    except Exception as err:
        raise KeyFileError(what, f"{path} cannot be loaded: {err}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(what, f"{path} is not an Ed25519 key")
    return key


@dataclass(frozen=True, slots=True)
class Keyring:
    """The key that signs now, and the older public keys still published."""

    signing: Ed25519PrivateKey
    previous: tuple[Ed25519PublicKey, ...] = ()
    kid: str = field(init=False)  # the signing key's, computed once (every receipt's header names it)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kid", key_id(self.signing.public_key()))

    def jwks(self) -> dict[str, Any]:
        """``{"keys": [...]}``: the signing key first, then the previous ones
        (each once, even if listed twice or equal to the signing key)."""
        keys: list[dict[str, str]] = []
        for public in (self.signing.public_key(), *self.previous):
            jwk = public_jwk(public)
            if all(k["kid"] != jwk["kid"] for k in keys):
                keys.append(jwk)
        return {"keys": keys}


def keyring(secret: str, key_file: Path | None = None, previous_key_files: Sequence[Path] = ()) -> Keyring:
    """The daemon's keys: ``key_file``'s, else derived from ``secret``.
    Raises :class:`KeyFileError` (one line naming the file)."""
    signing = load_private(key_file) if key_file is not None else derive_key(secret)
    return Keyring(signing, tuple(load_public(p) for p in previous_key_files))
