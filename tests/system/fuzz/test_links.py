"""Random answer link tokens and form bodies on ``/a/{T}``: a token askd
did not mint is always the one 404 page, a form is taken (200) or refused
(400) but never a 500, and nothing is logged at error level."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askd.channels import links
from tests.conftest import SECRET
from tests.system.fuzz.conftest import LiveDaemon
from tests.system.fuzz.strategies import json_values
from tests.support.profiles import scaled

url_safe = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#"), max_size=300)
# Sealed with askd's own link key, but not a payload askd writes.
sealed_junk = json_values.map(lambda v: links._seal(SECRET, v))
form_keys = st.sampled_from(["action", "reason", "q0", "q0.text", "q1", "q1.text", "q9", "other"])
form_values = st.sampled_from(["answer", "decline", "0", "1", "2", "-1", "99", ""]) | st.text(max_size=50)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@settings(max_examples=scaled(0.5))
@given(token=url_safe | sealed_junk)
def test_tokens_askd_did_not_mint_are_404(live: LiveDaemon, http: httpx.Client, token: str) -> None:
    url = f"{live.url}/a/{quote(token, safe='')}"
    for r in (http.get(url), http.head(url), http.post(url, data={"action": "answer"})):
        assert r.status_code == 404, (r.status_code, token)


@settings(max_examples=scaled(0.5))
@given(form=st.lists(st.tuples(form_keys, form_values), max_size=8))
def test_any_form_is_taken_or_refused_never_an_error(live: LiveDaemon, http: httpx.Client, form: list[tuple[str, str]]) -> None:
    questions = [{"question": "Which?", "options": [{"label": "a"}, {"label": "b"}], "multiSelect": True}, {"question": "Why?"}]
    asked = http.post(
        f"{live.url}/v1/sessions/fz-links/questions", json={"userId": "fz-links", "questions": questions},
        headers=live.headers("agent"),
    )
    rid = asked.json()["requestId"]
    url = f"{live.url}/a/{links.mint(SECRET, 'fz-links', rid, 'fz-links')}"
    fields: dict[str, list[str]] = {}
    for key, value in form:
        fields.setdefault(key, []).append(value)
    r = http.post(url, data=fields)
    assert r.status_code in (200, 400), (r.status_code, form)
    result = f"{live.url}/v1/sessions/fz-links/questions/{rid}"
    status = http.get(result, headers=live.headers("agent")).json()["status"]
    assert status == "pending" if r.status_code == 400 else status in ("answered", "declined"), (status, form)
    if status == "pending":
        http.delete(result, headers=live.headers("agent"))
