"""Answer link tokens (askd.channels.links): what one names, that it names it to
askd alone, and that nothing else reads as one."""

from __future__ import annotations

import base64
import json
import string

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given
from hypothesis import strategies as st

from askd import tokens
from askd.channels import links
from askd.core import Request
from tests.conftest import SECRET

BASE64URL = string.ascii_letters + string.digits + "-_"
# Ids long enough that one cannot turn up in a token by chance.
ids = st.text(st.characters(codec="utf-8"), min_size=8, max_size=40)
options = st.none() | st.integers(min_value=0, max_value=30)


def request(questions: list[dict]) -> Request:
    frame = json.dumps({"type": "ask_user_questions", "payload": {"questions": questions}}).encode()
    return Request("r1", "s1", "alice", 0.0, 60.0, frame=frame)


def test_a_link_names_its_question_recipient_and_option() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice", 2)
    assert links.read(SECRET, t) == links.LinkClaim("s1", "r1", "alice", 2)
    shared = links.mint(SECRET, "s1", "r1", None)
    assert links.read(SECRET, shared) == links.LinkClaim("s1", "r1", None, None)
    assert set(t) <= set(BASE64URL)  # a path segment as it is, no padding


def decodings(token: str) -> list[bytes]:
    """The bytes ``token`` reads as in base64 from each of its first four
    characters: whatever was base64-encoded inside it, at any alignment."""
    out = []
    for shift in range(4):
        part = token[shift:]
        part = part[: len(part) - len(part) % 4]
        out += [base64.urlsafe_b64decode(part), base64.b64decode(part.replace("-", "+").replace("_", "/"))]
    return out


def spellings(value: str) -> list[bytes]:
    """Every form an id could take inside a token: its text (UTF-8 and as
    escaped JSON) and its base64, padded or not, in either alphabet."""
    raw = [value.encode("utf-8", "surrogatepass"), json.dumps(value).strip('"').encode()]
    encoded = [enc(r) for r in raw for enc in (base64.b64encode, base64.urlsafe_b64encode)]
    return raw + encoded + [e.rstrip(b"=") for e in encoded]


def assert_names_nothing(token: str, *names: str) -> None:
    seen = [token.encode(), token.lower().encode(), *decodings(token)]
    for name in names:
        for form in spellings(name):
            for text in seen:
                assert form not in text and form.lower() not in text.lower(), (name, form, token)


def test_a_link_names_nothing_to_whoever_sees_it() -> None:
    session, request, user = "session-7f3a9c2e", "request-41b8d6f0", "alice.smith@example.com"
    for option in (None, 0, 3):
        assert_names_nothing(links.mint(SECRET, session, request, user, option), session, request, user)
    assert_names_nothing(links.mint(SECRET, session, request, None), session, request)


@given(session=ids, request=ids, user=ids, option=options)
def test_no_link_names_its_ids(session: str, request: str, user: str, option: int | None) -> None:
    t = links.mint(SECRET, session, request, user, option)
    assert_names_nothing(t, session, request, user)
    assert links.read(SECRET, t) == links.LinkClaim(session, request, user, option)


def test_one_claim_is_always_one_link() -> None:
    assert links.mint(SECRET, "s1", "r1", "alice", 1) == links.mint(SECRET, "s1", "r1", "alice", 1)
    others = {
        links.mint(SECRET, "s1", "r1", "alice", 1),
        links.mint(SECRET, "s1", "r1", "alice", 0),
        links.mint(SECRET, "s1", "r1", "alice"),
        links.mint(SECRET, "s1", "r1", "bob", 1),
        links.mint(SECRET, "s1", "r1", None, 1),
        links.mint(SECRET, "s1", "r2", "alice", 1),
        links.mint(SECRET, "s2", "r1", "alice", 1),
        links.mint("another-secret-0123456789abcdef", "s1", "r1", "alice", 1),
    }
    assert len(others) == 8


def test_a_typical_link_stays_short() -> None:
    # 32-character ids (a uuid4's hex, say): T stays under 200 characters,
    # the whole link well inside what chat buttons and mail clients take.
    t = links.mint(SECRET, "a" * 32, "b" * 32, "c" * 32, 4)
    assert len(t) < 200, len(t)
    assert len(links.mint(SECRET, "s1", "r1", "alice", 0)) < 64


def test_every_altered_character_and_every_truncation_is_refused() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice", 0)
    for i, ch in enumerate(t):
        for other in set(BASE64URL + ".=+/ ") - {ch}:
            assert links.read(SECRET, t[:i] + other + t[i + 1 :]) is None, (i, other)
        assert links.read(SECRET, t[:i] + t[i + 1 :]) is None, i
    for n in range(len(t)):
        assert links.read(SECRET, t[:n]) is None, n
    for extra in ("A", "=", "==", "."):
        assert links.read(SECRET, t + extra) is None


@given(session=ids, user=st.none() | ids, option=options, data=st.data())
def test_any_link_altered_anywhere_is_refused(session: str, user: str | None, option: int | None, data: st.DataObject) -> None:
    t = links.mint(SECRET, session, "r1", user, option)
    i = data.draw(st.integers(min_value=0, max_value=len(t) - 1))
    other = data.draw(st.sampled_from(BASE64URL).filter(lambda c: c != t[i]))
    assert links.read(SECRET, t[:i] + other + t[i + 1 :]) is None
    assert links.read(SECRET, t[: data.draw(st.integers(min_value=0, max_value=len(t) - 1))]) is None


def sealed(info: bytes, version: bytes, payload: list) -> str:
    """``payload`` sealed as links are, but with the purpose and version given."""
    key = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=info).derive(SECRET.encode())
    data = version + AESSIV(key).encrypt(json.dumps(payload).encode(), [version])
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_only_the_link_key_and_format_make_a_link() -> None:
    claim = ["s1", "r1", "alice", 0]
    assert links.read(SECRET, sealed(links.PURPOSE, b"\x02", claim)) == links.LinkClaim("s1", "r1", "alice", 0)
    assert links.read(SECRET, sealed(b"askd.another-purpose", b"\x02", claim)) is None
    assert links.read(SECRET, sealed(links.PURPOSE, b"\x03", claim)) is None
    assert links.read(SECRET, sealed(links.PURPOSE, b"\x02", [1, *claim])) is None  # the old payload's shape


def test_a_link_of_the_old_readable_format_is_refused() -> None:
    # askd's links before they were encrypted: itsdangerous, base64 of
    # [1, "s1", "r1", "alice", 0] and its HMAC, minted under tests' SECRET.
    old = "WzEsInMxIiwicjEiLCJhbGljZSIsMF0.RfnlmShc1UyO45Se-EP0nsr-f9nQIltBlyMbvz8thgA"
    assert json.loads(base64.urlsafe_b64decode(old.split(".")[0] + "==")) == [1, "s1", "r1", "alice", 0]
    assert links.read(SECRET, old) is None


def test_another_secret_reads_nothing() -> None:
    assert links.read("another-secret-0123456789abcdef", links.mint(SECRET, "s1", "r1", "alice")) is None


def test_a_link_is_no_token_and_a_token_is_no_link() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice")
    with pytest.raises(tokens.TokenError):
        tokens.verify(SECRET, t)
    for role, sub in (("user", "alice"), ("admin", None), ("agent", None)):
        assert links.read(SECRET, tokens.issue(SECRET, role, sub)) is None  # type: ignore[arg-type]
    assert links.read(SECRET, tokens.issue_open_code(SECRET, "alice", None)) is None


@pytest.mark.parametrize("junk", ["", ".", "a.b", "a" * 5000, "é.é", "\x00", "W10.sig"])
def test_junk_is_no_link(junk: str) -> None:
    assert links.read(SECRET, junk) is None


def test_links_for_one_question_with_options() -> None:
    req = request([{"question": "Deploy?", "options": [{"label": "Yes"}, {"label": "No"}]}])
    got = links.links_for("https://askd.example/base/", SECRET, req, ["alice", "bob"])
    assert set(got) == {"alice", "bob"}
    alice = got["alice"]
    assert alice["open"].startswith("https://askd.example/base/a/")
    assert links.read(SECRET, alice["open"].rsplit("/", 1)[1]) == links.LinkClaim("s1", "r1", "alice", None)
    assert [o["label"] for o in alice["options"]] == ["Yes", "No"]
    claims = [links.read(SECRET, o["url"].rsplit("/", 1)[1]) for o in got["bob"]["options"]]
    assert claims == [links.LinkClaim("s1", "r1", "bob", 0), links.LinkClaim("s1", "r1", "bob", 1)]


@pytest.mark.parametrize(
    "questions",
    [
        [{"question": "Why?"}],
        [{"question": "A?", "options": [{"label": "x"}]}, {"question": "B?", "options": [{"label": "y"}]}],
    ],
)
def test_no_one_tap_links_without_one_question_with_options(questions: list[dict]) -> None:
    assert links.link_set("http://h", SECRET, request(questions), "alice")["options"] == []


@pytest.mark.parametrize("odd", ["\ud800", "a\udfffb", "😀", "é", "\u202e"])
def test_any_id_a_question_may_have_mints_and_reads_back(odd: str) -> None:
    t = links.mint(SECRET, f"s{odd}", "r1", f"u{odd}", 0)
    assert links.read(SECRET, t) == links.LinkClaim(f"s{odd}", "r1", f"u{odd}", 0)


def test_a_link_carries_its_epoch_and_links_of_epoch_zero_read_as_before() -> None:
    at = 1796192076.188  # a revocation instant, as revoke-all keeps it (to the millisecond)
    assert links.epoch_of(at) == 1796192076188 and links.epoch_of(0.0) == 0
    t = links.mint(SECRET, "s1", "r1", "alice", 1, links.epoch_of(at))
    assert links.read(SECRET, t) == links.LinkClaim("s1", "r1", "alice", 1, 1796192076188)
    # A link of an askd never revoked is the four-item claim links always were.
    before_epochs = sealed(links.PURPOSE, b"\x02", ["s1", "r1", "alice", 1])
    assert links.read(SECRET, before_epochs) == links.LinkClaim("s1", "r1", "alice", 1, 0)
    assert links.read(SECRET, links.mint(SECRET, "s1", "r1", "alice", 1)).epoch == 0  # type: ignore[union-attr]
    assert links.mint(SECRET, "s1", "r1", "alice", 1, 5) != links.mint(SECRET, "s1", "r1", "alice", 1, 6)
    t = links.mint(SECRET, "a" * 32, "b" * 32, "c" * 32, 4, links.epoch_of(at))
    assert len(t) < 200, len(t)  # still short with an epoch


@pytest.mark.parametrize("epoch", [-1, True, 1.5, "1", None, [1]])
def test_a_sealed_claim_with_a_bad_epoch_is_no_link(epoch: object) -> None:
    assert links.read(SECRET, sealed(links.PURPOSE, b"\x02", ["s1", "r1", "alice", 0, epoch])) is None
