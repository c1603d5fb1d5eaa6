"""askd.receipts on its own: the digest, keys and JWKS, signing and the
checks ``verify`` makes (signature, kid, alg, and for approvals the action)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from askd.receipts import (
    KeyFileError,
    ReceiptError,
    approval_content,
    derive_key,
    digest,
    key_id,
    keyring,
    questions_content,
    receipt_claims,
    sign,
    verify,
)
from tests.receipts.independent import b64, check, digest_of, thumbprint

SECRET = "a-secret-of-at-least-32-characters-0123"
QUESTIONS = [{"question": "Deploy to prod?", "options": [{"label": "yes"}, {"label": "no"}], "header": "Ship"}]


def claims(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict(
        iss=None, session_id="s1", request_id="r1", status="answered", by="alice", via="ws",
        digest=digest(questions_content(QUESTIONS, {"Deploy to prod?": "yes"})), ended_at=1764656104.25,
    )
    base.update(over)
    return receipt_claims(**base)


def pem(key: Any, private: bool = True) -> bytes:
    if private:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def resign(receipt: str, header: dict[str, Any] | None = None, payload: dict[str, Any] | None = None) -> str:
    """The receipt with its header or payload replaced, the signature kept."""
    head, body, sig = receipt.split(".")
    enc = lambda obj: base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()  # noqa: E731
    return ".".join([enc(header) if header else head, enc(payload) if payload else body, sig])


# ---- digest ------------------------------------------------------------


def test_digest_is_sha256_of_the_rfc8785_form_recomputed_independently() -> None:
    content = {"questions": QUESTIONS, "answers": {"Deploy to prod?": "yes", "é": [1.5, 2.0, 1e21]}}
    assert digest(content) == digest_of(content)
    # Member order and spacing do not matter; values do.
    reordered = json.loads(json.dumps({"answers": content["answers"], "questions": QUESTIONS}, indent=2))
    assert digest(reordered) == digest(content)
    assert digest({**content, "answers": None}) != digest(content)


def test_an_integer_beyond_2_53_is_hashed_as_the_double_json_parse_reads() -> None:
    content = {"questions": [{"question": "n?", "n": 2**60 + 1}], "answers": None}
    assert digest(content) == digest_of({"questions": [{"question": "n?", "n": float(2**60)}], "answers": None})


def test_a_lone_surrogate_is_hashed_as_the_replacement_character() -> None:
    content = {"questions": [{"question": "q\ud800?", "x\udfff": 1}], "answers": {"q\ud800?": "a"}}
    fixed = {"questions": [{"question": "q\ufffd?", "x\ufffd": 1}], "answers": {"q\ufffd?": "a"}}
    assert digest(content) == digest_of(fixed)
    # A surrogate pair is one character, hashed as itself.
    assert digest({"s": json.loads('"\\ud83d\\ude00"')}) == digest_of({"s": "\U0001f600"})


def test_approval_content_names_action_and_scope_only() -> None:
    action = {"name": "deploy", "arguments": {"env": "prod"}, "extra": "ignored"}
    assert approval_content(action, None) == {"action": {"name": "deploy", "arguments": {"env": "prod"}}, "scope": None}


# ---- keys --------------------------------------------------------------


def test_the_derived_key_depends_on_the_secret_only_and_kid_is_the_rfc7638_thumbprint() -> None:
    one, again, other = keyring(SECRET), keyring(SECRET), keyring(SECRET + "x")
    assert one.jwks() == again.jwks()
    assert one.kid != other.kid
    [jwk] = one.jwks()["keys"]
    assert jwk["kid"] == thumbprint(jwk) == one.kid
    assert set(jwk) == {"kty", "crv", "x", "kid", "use", "alg"}
    # Not the secret's bytes: a key of its own (HKDF with askd's info).
    assert derive_key(SECRET).private_bytes_raw() != SECRET.encode()[:32]


def test_a_key_file_signs_and_previous_keys_private_or_public_stay_published(tmp_path: Path) -> None:
    old1, old2, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    (tmp_path / "old1.pem").write_bytes(pem(old1))
    (tmp_path / "old2.pub").write_bytes(pem(old2, private=False))
    (tmp_path / "new.pem").write_bytes(pem(new))
    before = keyring(SECRET, tmp_path / "old1.pem")
    old_receipt = sign(claims(), before)
    ring = keyring(SECRET, tmp_path / "new.pem", [tmp_path / "old1.pem", tmp_path / "old2.pub", tmp_path / "old1.pem"])
    kids = [k["kid"] for k in ring.jwks()["keys"]]
    # The signing key first, then each previous one once.
    assert kids == [key_id(new.public_key()), key_id(old1.public_key()), key_id(old2.public_key())]
    assert ring.kid == kids[0] != keyring(SECRET).kid  # the file's key, not the derived one
    assert verify(old_receipt, ring.jwks())["rid"] == "r1"  # rotated out, still verifiable
    assert check(sign(claims(), ring), ring.jwks())[0]["kid"] == ring.kid
    # Without the old key published, its receipts no longer verify.
    with pytest.raises(ReceiptError, match="unknown kid"):
        verify(old_receipt, keyring(SECRET, tmp_path / "new.pem").jwks())


@pytest.mark.parametrize(
    "content, why",
    [
        (None, "does not exist"),
        (b"not a key", "is not an unencrypted PEM private key"),
        ("ec", "is not an Ed25519 key"),
    ],
)
def test_a_key_file_that_does_not_load_says_which_and_why(tmp_path: Path, content: Any, why: str) -> None:
    path = tmp_path / "key.pem"
    if content == "ec":
        content = pem(ec.generate_private_key(ec.SECP256R1()))
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(KeyFileError) as err:
        keyring(SECRET, path)
    assert err.value.setting == "receipts.key_file"
    assert err.value.detail == f"{path} {why}"


def test_a_previous_key_file_that_does_not_load_is_refused(tmp_path: Path) -> None:
    (tmp_path / "junk.pem").write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    with pytest.raises(KeyFileError) as err:
        keyring(SECRET, None, [tmp_path / "junk.pem"])
    assert err.value.setting == "receipts.previous_key_files"


# ---- sign and verify ----------------------------------------------------


def test_sign_then_verify_gives_the_claims_and_signing_is_deterministic() -> None:
    ring = keyring(SECRET)
    receipt = sign(claims(), ring)
    assert receipt == sign(claims(), keyring(SECRET))
    got = verify(receipt, ring.jwks())
    assert got == {
        "iss": "askd", "iat": 1764656104, "sid": "s1", "rid": "r1", "status": "answered", "by": "alice", "via": "ws",
        "digest": digest_of(questions_content(QUESTIONS, {"Deploy to prod?": "yes"})), "endedAt": "2025-12-02T06:15:04.250Z",
    }
    header, independent = check(receipt, ring.jwks())
    assert independent == got and header["kid"] == ring.kid


def test_a_tampered_payload_is_refused() -> None:
    ring = keyring(SECRET)
    receipt = sign(claims(), ring)
    forged = resign(receipt, payload={**verify(receipt, ring.jwks()), "by": "mallory"})
    with pytest.raises(ReceiptError, match="^bad signature$"):
        verify(forged, ring.jwks())


def test_a_tampered_signature_is_refused() -> None:
    ring = keyring(SECRET)
    head, body, sig = sign(claims(), ring).split(".")
    flipped = bytearray(b64(sig))
    flipped[0] ^= 1
    bad = base64.urlsafe_b64encode(bytes(flipped)).rstrip(b"=").decode()
    with pytest.raises(ReceiptError, match="^bad signature$"):
        verify(f"{head}.{body}.{bad}", ring.jwks())


def test_an_unknown_kid_is_refused_and_a_kid_swapped_in_breaks_the_signature() -> None:
    ring, other = keyring(SECRET), keyring(SECRET + "-other")
    receipt = sign(claims(), other)
    with pytest.raises(ReceiptError, match=f"^unknown kid {other.kid}"):
        verify(receipt, ring.jwks())
    # A header rewritten to name a published key: the signature covers the header.
    swapped = resign(receipt, header={"alg": "EdDSA", "kid": ring.kid, "typ": "JWT"})
    with pytest.raises(ReceiptError, match="^bad signature$"):
        verify(swapped, ring.jwks())


def test_another_alg_is_refused_even_with_a_known_kid() -> None:
    ring = keyring(SECRET)
    [jwk] = ring.jwks()["keys"]
    # HS256 "signed" with the public key as the HMAC secret: the classic confusion.
    hs = jwt.encode(claims(), b64(jwk["x"]), algorithm="HS256", headers={"kid": ring.kid})
    with pytest.raises(ReceiptError, match="^bad signature: alg 'HS256'"):
        verify(hs, ring.jwks())
    unsigned = resign(sign(claims(), ring), header={"alg": "none", "kid": ring.kid}).rsplit(".", 1)[0] + "."
    with pytest.raises(ReceiptError, match="alg 'none'"):
        verify(unsigned, ring.jwks())


def test_a_jwks_entry_of_another_kind_under_the_kid_is_refused() -> None:
    ring = keyring(SECRET)
    receipt = sign(claims(), ring)
    wrong = {"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": ring.kid, "alg": "HS256"}]}
    with pytest.raises(ReceiptError, match="not an Ed25519"):
        verify(receipt, wrong)
    with pytest.raises(ReceiptError, match="not a compact JWS"):
        verify("junk", ring.jwks())


def test_with_an_action_only_an_approval_of_exactly_it_passes() -> None:
    ring = keyring(SECRET)
    action = {"name": "deploy", "arguments": {"env": "prod", "replicas": 3}}
    scope = {"once": True}
    approval = {"approved": True, "scope": scope, "approvals": ["alice"]}
    approved = sign(claims(status="answered", digest=digest(approval_content(action, scope)), approval=approval), ring)
    got = verify(approved, ring.jwks(), action=action)
    assert (got["approved"], got["scope"], got["approvals"]) == (True, scope, ["alice"])
    with pytest.raises(ReceiptError, match="^digest mismatch"):
        verify(approved, ring.jwks(), action={**action, "arguments": {"env": "prod", "replicas": 30}})
    denied_claims = claims(digest=digest(approval_content(action, None)), approval={"approved": False, "scope": None, "approvals": []})
    with pytest.raises(ReceiptError, match="^not approved$"):
        verify(sign(denied_claims, ring), ring.jwks(), action=action)
    # A question's receipt approves nothing.
    with pytest.raises(ReceiptError, match="^not approved$"):
        verify(sign(claims(), ring), ring.jwks(), action=action)
