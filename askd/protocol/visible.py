"""Characters that change what a person reads without being seen
(protocol sections 4 and 17): bidirectional controls, which reorder the
text around them ("Trojan Source": ``cat a \\u2067; echo b #\\u2069`` reads
as ``cat a # echo b ;``), and zero-width characters, which make two
different strings look the same.

askd never lets them pass unseen. Names that identify someone or something
(user ids, group names, session and question ids, option labels) refuse
them, with control characters (``refusal``); texts a person reads before
deciding (an action, a preview, a question, an option) keep them, since
the agent gets back exactly what it sent, but every place askd shows such a
text replaces each one with a visible mark (``⟨U+2067⟩``, ``reveal``) under
the warning line ``WARNING``. The inbox page's ``static/hidden.js`` holds
the same set (``tests/web/test_hidden_chars.py`` checks they agree).

The soft hyphen (U+00AD) counts as zero-width: it is drawn only where a
line breaks, so ``r\\u00adm`` reads as ``rm``, and text an agent writes has
no need of it.
"""

from __future__ import annotations

import re
from typing import Any

#: The bidirectional controls: embeddings and overrides (U+202A-U+202E),
#: isolates (U+2066-U+2069), the marks LRM, RLM (U+200E, U+200F) and the
#: Arabic letter mark (U+061C).
BIDI_CONTROLS = frozenset((0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)))

#: Characters drawn as nothing: zero width space, non-joiner, joiner, word
#: joiner, the byte order mark (zero width no-break space), and the soft hyphen.
ZERO_WIDTH = frozenset((0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF))

HIDDEN = BIDI_CONTROLS | ZERO_WIDTH

#: C0 controls, DEL and C1 controls: never part of a name.
CONTROLS = frozenset((*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)))

#: The line shown above a text that holds any of ``HIDDEN`` (the page
#: translates it: ``hidden.warning`` in static/i18n).
WARNING = "This text has hidden or reordering characters: each is shown as a ⟨U+…⟩ mark."


def _class(codes: frozenset[int]) -> str:
    """A regex character class of ``codes``, runs written as ranges."""
    runs: list[list[int]] = []
    for code in sorted(codes):
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "[" + "".join(f"\\u{a:04X}" + (f"-\\u{b:04X}" if b > a else "") for a, b in runs) + "]"


HIDDEN_RE = re.compile(_class(HIDDEN))
_REFUSED_RE = re.compile(_class(HIDDEN | CONTROLS))

#: JSON Schema ``pattern``\ s (ECMA-262, and Python's regex alike): a name
#: with none of the refused characters; a text with no control character.
NAME_PATTERN = "^[^" + _class(HIDDEN | CONTROLS)[1:-1] + "]+$"
NO_CONTROLS_PATTERN = "^[^" + _class(CONTROLS)[1:-1] + "]*$"


def mark(char: str) -> str:
    """The visible stand-in of one hidden character: ``⟨U+2067⟩``."""
    return f"⟨U+{ord(char):04X}⟩"


def has_hidden(text: str) -> bool:
    return HIDDEN_RE.search(text) is not None


def reveal(text: str) -> str:
    """``text`` with each hidden character replaced by its mark."""
    return HIDDEN_RE.sub(lambda m: mark(m.group()), text)


def refusal(text: str) -> str | None:
    """Why ``text`` cannot name anything (a control, bidirectional or
    zero-width character, and which), or None when it can."""
    found = _REFUSED_RE.search(text)
    if found is None:
        return None
    code = ord(found.group())
    kind = "a control" if code in CONTROLS else "a bidirectional control" if code in BIDI_CONTROLS else "a zero-width"
    return f"must not hold {kind} character (U+{code:04X} at {found.start()})"


def refuse_hidden(text: str) -> str:
    """A pydantic ``AfterValidator``: ``text`` as it is, or a ``ValueError`` (a 400 with its ``loc``)."""
    problem = refusal(text)
    if problem is not None:
        raise ValueError(problem)
    return text


def refuse_controls(text: str) -> str:
    """A pydantic ``AfterValidator`` for a text that may hold bidirectional
    or zero-width characters (shown marked) but no control character."""
    for i, char in enumerate(text):
        if ord(char) in CONTROLS:
            raise ValueError(f"must not hold a control character (U+{ord(char):04X} at {i})")
    return text


def _reveal_deep(value: Any) -> Any:
    if isinstance(value, str):
        return reveal(value)
    if isinstance(value, dict):
        return {reveal(str(k)): _reveal_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal_deep(v) for v in value]
    return value


def _texts(described: dict[str, Any]) -> list[Any]:
    """What a person reads of a question or an action, to test for hidden characters."""
    return [described.get("questions"), described.get("action")]


def shows_hidden(described: dict[str, Any]) -> bool:
    """Whether anything a person reads of ``described`` (a pending
    question's payload, an event, a listing's entry) holds a hidden character."""
    found = False

    def walk(value: Any) -> None:
        nonlocal found
        if found:
            return
        if isinstance(value, str):
            found = has_hidden(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(str(k))
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(_texts(described))
    return found


def revealed(described: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``described`` for display: every text of its questions and
    its action (names, labels, Markdown, the arguments' keys and values)
    with its hidden characters marked. Never what is stored, signed or
    sent back to the agent."""
    out = dict(described)
    for key in ("questions", "action"):
        if key in out:
            out[key] = _reveal_deep(out[key])
    return out
