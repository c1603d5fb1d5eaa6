"""E-mail addresses as askd takes them: a user's (``PUT /admin/v1/users/{U}``,
``askd user set``) and its own From (``notify.email_from``).

askd never resolves a domain: it hands every mail to the relay of
``notify.smtp_url``, which knows its network's names. So any well-formed
address is taken, on any domain: ``alice@corp.local`` (Active Directory),
``askd@mail.lan``, ``ops@example.test``, ``root@mailhost``. Only a malformed
one is refused. email-validator checks the syntax (and normalizes: the
domain lower-cased, IDNA); its deliverability checks are off
(``check_deliverability``, ``globally_deliverable``, ``test_environment``).

One of its refusals is policy, not syntax, and has no per-call switch: a
domain under IANA's special-use names (``local``, ``localhost``,
``invalid``, ``onion``, ``arpa``). Its README's way out is to edit the
module's list, which would change every other caller's answers in the
process (askd is imported by agents too). Instead, such an address is
checked with that last label replaced by letters of the same length, so
every syntax rule still applies, and the label is put back in the result.
"""

from __future__ import annotations

import re
from email.headerregistry import Address
from typing import Annotated, Any

import email_validator
from pydantic import NameEmail, PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

#: The most characters taken, display name included (as pydantic's own types).
MAX_LENGTH = 2048

_CHECKS: dict[str, Any] = {"check_deliverability": False, "globally_deliverable": False, "test_environment": True}

# The domain's last label, at the end of the address or before the ``>`` of
# ``Name <address>``.
_LAST_LABEL = re.compile(r"(?<=[.@])([A-Za-z]+)(?=>?\s*$)")


def _refused(reason: str) -> PydanticCustomError:
    return PydanticCustomError("value_error", "value is not a valid email address: {reason}", {"reason": reason})


def _special_use(label: str) -> bool:
    return label.lower() in email_validator.SPECIAL_USE_DOMAIN_NAMES


def checked(text: str, *, display_name: bool = False) -> email_validator.ValidatedEmail:
    """``text`` validated and normalized, on any domain; raises pydantic's
    ``value_error`` naming what is malformed. ``display_name``: also take
    ``Name <address>``."""
    if len(text) > MAX_LENGTH:
        raise _refused(f"it is longer than {MAX_LENGTH} characters")
    if "\r" in text or "\n" in text:  # a header's line break: never part of one value
        raise _refused("it contains a line break")
    text = text.strip()
    label = _LAST_LABEL.search(text)
    stand_in = label is not None and _special_use(label.group(1))
    if label is not None and stand_in:
        text = text[: label.start()] + "x" * len(label.group(1)) + text[label.end() :]
    try:
        valid = email_validator.validate_email(text, allow_display_name=display_name, **_CHECKS)
    except email_validator.EmailNotValidError as err:
        raise _refused(str(err)) from None
    if label is not None and stand_in:
        real = label.group(1).lower()  # ASCII letters: IDNA leaves them as they are, lower-cased
        for field in ("domain", "ascii_domain"):
            setattr(valid, field, getattr(valid, field)[: -len(real)] + real)
        valid.normalized = f"{valid.local_part}@{valid.domain}"
        valid.ascii_email = f"{valid.ascii_local_part}@{valid.ascii_domain}" if valid.ascii_email else None
    return valid


def _address(value: Any) -> str:
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    return checked(value, display_name=True).normalized  # a display name is dropped (docs/decisions.md)


def _sender(value: Any) -> NameEmail:
    if isinstance(value, NameEmail):
        return NameEmail(value.name, checked(value.email).normalized)
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    valid = checked(value, display_name=True)
    return NameEmail(valid.display_name or valid.local_part, valid.normalized)


#: An address, normalized (``Alice@CORP.Local`` -> ``Alice@corp.local``;
#: ``Alice <alice@corp.local>`` -> ``alice@corp.local``, as pydantic's ``EmailStr``).
EmailAddress = Annotated[str, PlainValidator(_address), WithJsonSchema({"type": "string", "format": "email"})]

#: ``Name <address>`` or a bare address (then named by its local part), as
#: pydantic's ``NameEmail``.
Sender = Annotated[
    NameEmail,
    PlainValidator(_sender),
    PlainSerializer(lambda v: str(Address(v.name, addr_spec=v.email))),  # quoted as a From needs
    WithJsonSchema({"type": "string", "format": "name-email"}),
]
