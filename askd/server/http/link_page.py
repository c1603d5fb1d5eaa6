"""``{public_url}/a/{T}``: the answer link page (askd.channels.links mints ``T``).

Server-rendered, no script, one column. ``GET`` and ``HEAD`` only read
(chat apps and mail scanners fetch links to preview them); ``POST`` answers
or declines through the hub exactly as a tab would, as the link's recipient
with ``via`` ``link``. Every link that names nothing askd holds, forged,
altered, forgotten or minted before the last ``askd token revoke-all``,
gets the same 404 page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import structlog
import tornado.template
import tornado.web
from pydantic import BaseModel

from askd.channels import links
from askd.core import AlreadyVoted, InvalidAnswer, InvalidRequest, NoSeat, NotPending, Request, Status
from askd.core.events import isotime
from askd.protocol import visible
from askd.protocol.models import DeclineBody
from askd.server.context import Context
from askd.server.front_door.revocation import not_before_now
from askd.server.http import link_approval
from askd.server.http.base import house_headers
from askd.server.http.link_form import MAX_TEXT, Unclear, answers_from_form, taken_view, view_questions
from askd.server.http.web import SECURITY_HEADERS
from askd.server.logs import get_logger
from askd.store import StoreUnavailable
from askd.web.languages import from_accept_language
from askd.web import STATIC_DIR

log = get_logger("askd.links")

PAGE_DIR = STATIC_DIR.parent / "link_page"
# The inbox's policy, with no script at all and forms posting to this origin only.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def _max_length(model: type[BaseModel], name: str) -> int:
    """A field's ``max_length``, as the model defines it (read, not repeated)."""
    return next(int(m.max_length) for m in model.model_fields[name].metadata if getattr(m, "max_length", None) is not None)


MAX_REASON = _max_length(DeclineBody, "reason")  # a decline's reason, as everywhere else


@cache
def _template() -> tornado.template.Template:
    return tornado.template.Loader(str(PAGE_DIR)).load("page.html")


@cache
def _catalogue(lang: str) -> dict[str, str]:
    texts: dict[str, str] = json.loads((PAGE_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return texts


def _texts(lang: str) -> Any:
    catalogue, english = _catalogue(lang), _catalogue("en")

    def t(key: str, **values: Any) -> str:
        text = catalogue.get(key) or english[key]
        return text.format_map({k: str(v) for k, v in values.items()})

    return t


@dataclass(frozen=True, slots=True)
class Found:
    claim: links.LinkClaim
    req: Request


class Refused(Exception):
    """A form that cannot be taken, its text already in the page's language
    (a 400 page); answers that do not fit raise ``InvalidAnswer``."""


class LinkPageHandler(tornado.web.RequestHandler):
    def initialize(self, ctx: Context) -> None:
        self.ctx = ctx
        self.lang = from_accept_language(self.request.headers.get("Accept-Language"))
        self.t = _texts(self.lang)

    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Robots-Tag", "noindex, nofollow")
        house_headers(self)

    def prepare(self) -> None:
        structlog.contextvars.clear_contextvars()

    # ---- reading --------------------------------------------------------

    async def get(self, token: str) -> None:
        found = await self._find(token)
        if found is None:
            return self._invalid()
        if found.req.pending:
            return self._approval(found) if found.req.approval is not None else self._ask(found)
        return self._outcome(found, mine=False)

    head = get  # Tornado sends a HEAD's headers only

    async def _find(self, token: str) -> Found | None:
        claim = links.read(self.ctx.secret, token)
        if claim is None:
            return None
        try:
            if claim.epoch < links.epoch_of(await not_before_now(self.ctx)):
                return None  # minted before the last `askd token revoke-all`
            req = await self.ctx.hub.lookup(claim.session_id, claim.request_id, fresh=True)
        except StoreUnavailable:
            raise tornado.web.HTTPError(503) from None
        if req is None:
            return None
        if req.pending:
            # A recipient taken out of the audience (a group changed) holds a
            # link to nothing; a one-tap option must still exist.
            if claim.user_id is not None and claim.user_id not in self.ctx.hub.audience(req):
                return None
            if req.approval is not None:  # an action to approve: its option names approve or deny
                if claim.option is not None and claim.option not in links.CHOICES:
                    return None
            elif claim.option is not None and claim.option >= len(links.one_tap_labels(req.questions)):
                return None
        structlog.contextvars.bind_contextvars(sessionId=req.session_id, requestId=req.request_id)
        return Found(claim, req)

    # ---- answering -------------------------------------------------------

    async def post(self, token: str) -> None:
        if not self._same_origin():
            return self._page(403, "title", view="message", notice=self.t("cross"))
        found = await self._find(token)
        if found is None:
            return self._invalid()
        claim, req = found.claim, found.req
        if not req.pending:
            return self._outcome(found, mine=False)
        form = {k: [v.decode("utf-8", "replace") for v in vs] for k, vs in self.request.body_arguments.items()}
        if req.approval is not None:
            return await self._decide(token, found, (form.get("action") or [""])[-1], form)
        hub, sid, rid = self.ctx.hub, req.session_id, req.request_id
        taken: dict[str, Any] = {}  # what this form gave, named in the reply to it alone
        try:
            if (form.get("action") or [""])[-1] == "decline":
                reason = (form.get("reason") or [""])[-1].strip() or None
                if reason is not None and len(reason) > MAX_REASON:
                    raise Refused(self.t("reason.long", n=MAX_REASON))
                ended = await hub.decline(sid, rid, reason, user_id=claim.user_id, via="link")
                taken["reason"] = reason is not None
            else:
                if claim.option is not None:
                    label = links.one_tap_labels(req.questions)[claim.option]
                    answers = {req.questions[0]["question"]: [label] if req.questions[0].get("multiSelect") else label}
                else:
                    answers = answers_from_form(req.questions, form)
                    if not answers:
                        raise Refused(self.t("empty"))
                shown = taken_view(req.questions, answers)  # read first: an ended request keeps no questions
                ended = await hub.answer(sid, rid, answers, user_id=claim.user_id, via="link")
                taken["answers"] = shown
        except Refused as err:
            return self._ask(found, form, notice=str(err))
        except Unclear as err:
            return self._ask(found, form, notice=self.t(err.key, **err.values))
        except InvalidAnswer as err:
            return self._ask(found, form, notice=self.t("refused", problem=err.message))
        except NotPending:
            # Another answer got in first (or the recipient left the audience).
            again = await self._find(token)
            return self._outcome(again, mine=False) if again is not None else self._invalid()
        except StoreUnavailable:
            return self._ask(found, form, notice=self.t("unavailable"), status=503)
        log.info("link.taken", status=ended.status.value, answeredBy=ended.answered_by)
        return self._outcome(Found(claim, ended), mine=True, taken=taken)

    async def _decide(self, token: str, found: Found, action: str, form: dict[str, list[str]]) -> None:
        """Approve (once, or always where offered) or deny an action, as the
        link's recipient, ``via`` ``link``: the hub's approve and decline,
        exactly as a tab's frame."""
        claim, req = found.claim, found.req
        hub, sid, rid = self.ctx.hub, req.session_id, req.request_id
        # Named in the reply to this form alone; the action's name read first: an ended request keeps no payload.
        taken: dict[str, Any] = {"decision": action, "name": link_approval.action_name(req)}
        try:
            if action == link_approval.DECLINE:
                reason = (form.get("reason") or [""])[-1].strip() or None
                if reason is not None and len(reason) > MAX_REASON:
                    return self._approval(found, self.t("reason.long", n=MAX_REASON), 400)
                ended = await hub.decline(sid, rid, reason, user_id=claim.user_id, via="link")
                taken["reason"] = reason is not None
            elif action in (link_approval.APPROVE, link_approval.ALWAYS):
                scope = "always" if action == link_approval.ALWAYS else None
                ended = await hub.approve(sid, rid, None, scope, user_id=claim.user_id, via="link")
            else:
                return self._approval(found, self.t("approval.choose"), 400)
        except AlreadyVoted:
            return self._approval(found, self.t("approval.voted"), 409)
        except NoSeat:  # a link not bound to one person, on a quorum above 1
            return self._approval(found, self.t("approval.shared"), 403)
        except InvalidRequest:  # `always` on an action that does not offer it
            return self._approval(found, self.t("approval.refused"), 400)
        except NotPending:
            again = await self._find(token)
            return self._outcome(again, mine=False) if again is not None else self._invalid()
        except StoreUnavailable:
            return self._approval(found, self.t("unavailable"), 503)
        log.info("link.taken", status=ended.status.value, answeredBy=ended.answered_by, approvals=ended.approvals)
        if ended.pending:  # an approval short of its quorum: recorded, the others still to come
            return self._approval(Found(claim, ended), self.t("approval.recorded"), 200)
        return self._outcome(Found(claim, ended), mine=True, taken=taken)

    def _same_origin(self) -> bool:
        """Refuse a form another site's page sends. The page's own
        ``no-referrer`` policy makes browsers send ``Origin: null`` with it,
        so a missing or null Origin is taken (the token in the path is what
        grants anything); a real Origin must be this one, and so must
        ``Sec-Fetch-Site`` where the browser sends it."""
        site = self.request.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            return False
        origin = self.request.headers.get("Origin")
        if origin is None or origin == "null":
            return True
        own = f"{self.request.protocol}://{self.request.host}".lower()
        return origin.lower() in (own, self.ctx.public_origin)

    # ---- pages -------------------------------------------------------------

    def _invalid(self) -> None:
        self._page(404, "invalid.title", view="invalid")

    def _ask(self, found: Found, form: dict[str, list[str]] | None = None, notice: str = "", status: int | None = None) -> None:
        req, claim = found.req, found.claim
        self._page(
            status or (400 if notice else 200),
            "title",
            view="ask",
            notice=notice,
            recipient=claim.user_id or "",
            option=claim.option,
            questions=view_questions(req.questions, form or {}),
            hidden=visible.shows_hidden({"questions": req.questions}),
            expires_iso=isotime(req.expires_at),
            expires_hm=isotime(req.expires_at)[11:16],
            max_text=MAX_TEXT,
            max_reason=MAX_REASON,
        )

    def _approval(self, found: Found, notice: str = "", status: int = 200) -> None:
        req, claim = found.req, found.claim
        self._page(
            status,
            "approval.title",
            view="approve",
            notice=notice,
            recipient=claim.user_id or "",
            choice=link_approval.choice_of(claim.option),
            action=link_approval.view_action(req, claim.user_id, self.t),
            expires_iso=isotime(req.expires_at),
            expires_hm=isotime(req.expires_at)[11:16],
            max_reason=MAX_REASON,
        )

    def _outcome(self, found: Found, *, mine: bool, taken: dict[str, Any] | None = None) -> None:
        """How the question ended and who answered, never what: whoever holds
        the link (a whole channel) sees this page, and what a person typed,
        an answer or a decline's reason, is for the agent only. ``mine``:
        this request just ended it; the link's own recipient who ended it
        earlier is told "you" too. ``taken``: what the form this page
        replies to gave (options chosen, an answer of one's own, an approval
        or a denial, whether a reason went with it), shown in that reply
        only: a later visit has none."""
        req, t = found.req, self.t
        taken = taken or {}
        if req.approval is not None:
            text = link_approval.outcome(req, found.claim.user_id, mine, t)
            decision = link_approval.decision_view(taken) if taken else None
            return self._page(200, "approval.title", view="outcome", ended=req.status.value, outcome=text, decision=decision)
        who = req.answered_by
        own = found.claim.user_id is not None and who == found.claim.user_id
        if req.status is Status.ANSWERED:
            if mine or own:
                text = t("answered.you") if mine else t("answered.mine")
            else:
                text = t("answered.by", who=who) if who else t("answered")
        elif req.status is Status.DECLINED:
            text = t("declined.you") if mine or own else t("declined.by", who=who) if who else t("declined")
        elif req.status is Status.TIMEOUT:
            text = t("defaulted") if req.defaulted else t("timeout")
        else:
            text = t("cancelled")
        self._page(
            200,
            "title",
            view="outcome",
            ended=req.status.value,
            outcome=text,
            taken=taken.get("answers"),
            reason=taken.get("reason"),
        )

    def _page(self, status: int, heading: str, **values: Any) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        for name, default in (("notice", ""), ("taken", None), ("decision", None), ("reason", False)):
            values.setdefault(name, default)
        notice_kind = "error" if status >= 400 else ""
        self.finish(
            _template().generate(lang=self.lang, t=self.t, heading=heading, static="../static/", notice_kind=notice_kind, **values)
        )

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        # Tornado's own line names the URI, and with it the link's token.
        if not isinstance(value, tornado.web.HTTPError):
            log.error("link.error", exc_info=(typ, value, tb))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if status_code == 503:
            self._page(503, "title", view="message", notice=self.t("unavailable"))
        else:
            self._page(status_code, "invalid.title", view="invalid")


def routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    return [(rf"/{links.PATH}/([^/]*)", LinkPageHandler, {"ctx": ctx})]
