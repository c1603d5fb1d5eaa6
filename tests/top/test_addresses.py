"""askd.addresses: any well-formed e-mail address, on any domain (askd never
resolves one), normalized by email-validator; a malformed one refused."""

from __future__ import annotations

import email_validator
import pytest
from pydantic import TypeAdapter, ValidationError

from askd.addresses import EmailAddress, Sender, checked

ADDRESS = TypeAdapter(EmailAddress)
SENDER = TypeAdapter(Sender)


@pytest.mark.parametrize(
    ("given", "normalized", "ascii_domain"),
    [
        ("alice@corp.local", "alice@corp.local", "corp.local"),
        ("alice@CORP.LOCAL", "alice@corp.local", "corp.local"),
        ("root@localhost", "root@localhost", "localhost"),
        ("ops@example.test", "ops@example.test", "example.test"),
        ("ops@host.invalid", "ops@host.invalid", "host.invalid"),
        ("ops@mail.lan", "ops@mail.lan", "mail.lan"),
        ("ops@mailhost", "ops@mailhost", "mailhost"),
        ("jürgen@bücher.local", "jürgen@bücher.local", "xn--bcher-kva.local"),  # IDNA below a special-use name
        ("a@b.c.d.example.com", "a@b.c.d.example.com", "b.c.d.example.com"),
        ("Alice <alice@corp.local>", "alice@corp.local", "corp.local"),  # a display name is dropped
    ],
)
def test_any_well_formed_address_is_taken_and_normalized(given: str, normalized: str, ascii_domain: str) -> None:
    assert ADDRESS.validate_python(given) == normalized
    valid = checked(given, display_name=True)
    assert (valid.normalized, valid.ascii_domain) == (normalized, ascii_domain)


@pytest.mark.parametrize(
    "given",
    [
        "alice",
        "alice@",
        "@corp.local",
        "alice@corp..local",
        "alice@corp.local.",
        "alice@.corp.local",
        "alice@-corp.local",
        "alice@corp_x.local",
        "al ice@corp.local",
        "alice@@corp.local",
        "Alice <alice@corp.local",
        "alice@corp.local\r\nBcc: eve@corp.local",
        "alice@" + "a" * 64 + ".local",  # a label longer than 63
        "alice@" + ".".join(["a" * 60] * 4) + ".local",  # an address longer than 254
        # Well formed, but obscure: refused, as email-validator's defaults do (docs/decisions.md).
        '"al ice"@corp.local',
        "alice@[10.0.0.1]",
    ],
)
def test_a_malformed_address_is_refused(given: str) -> None:
    with pytest.raises(ValidationError, match="value is not a valid email address"):
        ADDRESS.validate_python(given)


@pytest.mark.parametrize(
    ("given", "name", "address"),
    [
        ("askd <askd@corp.local>", "askd", "askd@corp.local"),
        ('"askd, the daemon" <askd@corp.local>', "askd, the daemon", "askd@corp.local"),
        ("askd@corp.local", "askd", "askd@corp.local"),
    ],
)
def test_a_sender_has_a_name(given: str, name: str, address: str) -> None:
    sender = SENDER.validate_python(given)
    assert (sender.name, sender.email) == (name, address)
    assert SENDER.validate_python(sender) == sender  # a NameEmail passes as it is
    assert SENDER.validate_python(SENDER.dump_python(sender)) == sender  # written back, it reads the same


def test_no_other_caller_of_email_validator_is_changed() -> None:
    # askd is imported by agents' processes: their own checks stay as they were.
    ADDRESS.validate_python("alice@corp.local")
    with pytest.raises(email_validator.EmailNotValidError, match="special-use"):
        email_validator.validate_email("alice@corp.local", check_deliverability=False)
