"""Receipts across daemons: one key for every node with the same secret, the
same receipt after a restart, a key file, ``iss``, and a key that does not
load stopping ``askd serve`` with one line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from askd.config import ConfigError
from askd.server.app import Daemon
from tests.cli.test_subprocess import ASKD
from tests.conftest import RunningDaemon, daemon_settings, running_daemon
from tests.receipts.independent import b64, check, thumbprint

HOST_KEY = "the-asking-process-own-host-key-0123456789"  # the ask lets its own host relay (protocol section 5)
ANSWER = {"answers": {"Which database?": "Postgres"}, "answeredBy": "alice", "hostKey": HOST_KEY}


async def answered(daemon: RunningDaemon, session: str = "s1") -> dict[str, Any]:
    rid = (await daemon.ask(session, hostKey=HOST_KEY))["requestId"]
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/{session}/questions/{rid}/answer", json=ANSWER, headers=daemon.agent_headers)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


async def jwks(daemon: RunningDaemon) -> dict[str, Any]:
    return (await daemon.http.get(f"{daemon.url}/.well-known/jwks.json")).json()  # type: ignore[no-any-return]


def key_pem(path: Path) -> Ed25519PrivateKey:
    key = Ed25519PrivateKey.generate()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return key


async def test_two_daemons_with_the_same_secret_publish_the_same_key_and_sign_alike(tmp_path: Path) -> None:
    async with running_daemon(tmp_path / "a", "memory", {}, None) as a, running_daemon(tmp_path / "b", "memory", {}, None) as b:
        ka, kb = await jwks(a), await jwks(b)
        assert ka == kb and len(ka["keys"]) == 1
        assert ka["keys"][0]["kid"] == thumbprint(ka["keys"][0])
        # A receipt from one checks out with the other's JWKS.
        check((await answered(a))["receipt"], kb)


async def test_the_receipt_is_the_same_after_a_restart(tmp_path: Path) -> None:
    async with running_daemon(tmp_path, "sqlite", {}, None) as first:
        before = await answered(first)
    async with running_daemon(tmp_path, "sqlite", {}, None) as second:
        after = (await second.result("s1", before["requestId"])).json()
        assert after["receipt"] == before["receipt"]
        check(after["receipt"], await jwks(second))


async def test_a_key_file_signs_and_previous_keys_are_published(tmp_path: Path) -> None:
    old, new = key_pem(tmp_path / "old.pem"), key_pem(tmp_path / "new.pem")
    settings = {"receipts": {"key_file": str(tmp_path / "old.pem")}}
    async with running_daemon(tmp_path / "one", "sqlite", settings, None) as first:
        signed_by_old = (await answered(first))["receipt"]
    rotated = {"receipts": {"key_file": str(tmp_path / "new.pem"), "previous_key_files": [str(tmp_path / "old.pem")]}}
    async with running_daemon(tmp_path / "two", "sqlite", rotated, None) as second:
        keys = await jwks(second)
        xs = [k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw) for k in (new, old)]
        assert [b64(k["x"]) for k in keys["keys"]] == xs
        check(signed_by_old, keys)
        header, _ = check((await answered(second))["receipt"], keys)
        assert header["kid"] == keys["keys"][0]["kid"]


async def test_iss_is_public_url_when_set(tmp_path: Path) -> None:
    settings = {"public_url": "https://tools.example.com/askd/", "allowed_hosts": ["127.0.0.1"]}
    async with running_daemon(tmp_path, "memory", settings, None) as daemon:
        _, claims = check((await answered(daemon))["receipt"], await jwks(daemon))
        assert claims["iss"] == "https://tools.example.com/askd/"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        (b"-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n", "is not an unencrypted PEM private key"),
    ],
)
def test_a_key_file_that_does_not_load_refuses_to_start(tmp_path: Path, content: bytes | None, expected: str) -> None:
    path = tmp_path / "receipts.pem"
    if content is not None:
        path.write_bytes(content)
    settings = daemon_settings(tmp_path / "state", "memory", {"receipts": {"key_file": str(path)}})
    with pytest.raises(ConfigError, match=f"^invalid setting receipts.key_file \\(ASKD_RECEIPTS__KEY_FILE\\): {path} {expected}$"):
        Daemon(settings)


def test_askd_serve_stops_with_one_line_for_a_key_that_is_not_ed25519(tmp_path: Path) -> None:
    path = tmp_path / "ec.pem"
    ec_key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env.update(ASKD_STATE_DIR=str(tmp_path / "state"), ASKD_RECEIPTS__PREVIOUS_KEY_FILES=f'["{path}"]')
    r = subprocess.run([*ASKD, "serve", "--port", "0", "--admin-port", "0"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [f"askd: invalid setting receipts.previous_key_files (ASKD_RECEIPTS__PREVIOUS_KEY_FILES): {path} is not an Ed25519 key"]
    assert not (tmp_path / "state" / "askd.json").exists()
