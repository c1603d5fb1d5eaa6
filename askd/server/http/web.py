"""The built-in web page: static files shipped inside the package, served
with strict security headers (no inline script, no framing, no referrer)."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import tornado.web
from pydantic import BaseModel, ConfigDict, Field

import askd
from askd import tokens
from askd.web import STATIC_DIR, WEB_DIR
from askd.server.context import Context
from askd.server.front_door.revocation import not_before_now
from askd.server.http.base import ApiError, ApiHandler, house_headers
from askd.store import StoreUnavailable


SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; manifest-src 'self'; worker-src 'self'; "
        "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _secure(handler: tornado.web.RequestHandler) -> None:
    for name, value in SECURITY_HEADERS.items():
        handler.set_header(name, value)
    house_headers(handler)


class StaticHandler(tornado.web.StaticFileHandler):
    def set_default_headers(self) -> None:
        _secure(self)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", "no-cache")

    def get_content_type(self) -> str:
        # Python's mimetypes does not know the manifest's own type.
        if self.absolute_path.endswith(".webmanifest"):
            return "application/manifest+json"
        return super().get_content_type()


class PageHandler(tornado.web.RequestHandler):
    """``/``: the inbox page. It signs in with a one-time code in the
    fragment (``#code=``, never sent here), which its script redeems through
    ``POST /v1/open`` and takes out of the address bar; it reads no token
    from its own address (docs/decisions.md)."""

    def set_default_headers(self) -> None:
        _secure(self)
        self.set_header("Cache-Control", "no-store")

    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC_DIR / "index.html").read_bytes())


#: The static files the page loads: the service worker's shell.
SHELL_SUFFIXES = (".js", ".css", ".json", ".svg", ".png", ".webmanifest")


def shell_files() -> list[str]:
    """The page's shell, relative to the page: the page itself, then every
    static file it may load (nothing the daemon makes per user)."""
    files = sorted(p.relative_to(STATIC_DIR).as_posix() for p in STATIC_DIR.rglob("*") if p.is_file() and p.suffix in SHELL_SUFFIXES)
    return ["./", *(f"static/{f}" for f in files)]


@functools.cache
def service_worker_script() -> bytes:
    """``service_worker.js`` with its shell and its cache's version filled
    in: askd's version and a digest of the files it keeps, so that an
    upgrade, or any change to them, replaces the cache (docs/web.md)."""
    files = shell_files()
    digest = hashlib.sha256()
    template = (WEB_DIR / "service_worker.js").read_bytes()
    digest.update(template)
    for name in ["index.html", *(f.removeprefix("static/") for f in files[1:])]:
        digest.update(name.encode() + b"\0" + (STATIC_DIR / name).read_bytes())
    version = f"{askd.__version__}-{digest.hexdigest()[:12]}"
    text = template.decode().replace("__ASKD_SHELL_VERSION__", json.dumps(version)).replace("__ASKD_SHELL_FILES__", json.dumps(files))
    return text.encode()


class ServiceWorkerHandler(tornado.web.RequestHandler):
    """``/sw.js``: the page's service worker, at the page's own folder so
    that its scope is the page's folder and no wider (protocol section 23)."""

    def set_default_headers(self) -> None:
        _secure(self)
        # Checked with askd at each page load: a new version takes over.
        self.set_header("Cache-Control", "no-cache")

    def get(self) -> None:
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        self.finish(service_worker_script())


#: The store's claim of a code's use: its kind, then its jti.
OPEN_ONCE_KEY = "open:"
#: A claim outlives its code by this much: a node whose clock is behind
#: still deems the code alive a little after the claim's own node does.
CLOCK_SLACK_SECONDS = 60.0


class OpenCodeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(min_length=1, max_length=4096)


class OpenCodeHandler(ApiHandler):
    """``POST /v1/open``: the page exchanges ``askd open``'s one-time code
    for a user token. The code is the credential, so no token is asked for.
    Its use is claimed in the store (a once key) before the token is
    made: taken once on every node, across restarts; a store that fails
    answers 503 and grants nothing. A code made before the last
    ``askd token revoke-all`` is refused as a token made then would be."""

    async def post(self) -> None:
        body, _ = self.json_body(OpenCodeBody)
        try:
            code = tokens.read_open_code(self.ctx.secret, body.code)
        except tokens.TokenError as err:
            raise ApiError("unauthorized", str(err)) from None
        try:
            if code.iat < await not_before_now(self.ctx):
                raise ApiError("unauthorized", "this link was made before its tokens were revoked; run `askd open` again")
            first = await self.ctx.hub.store.once_keys.take(OPEN_ONCE_KEY + code.jti, code.exp + CLOCK_SLACK_SECONDS)
        except StoreUnavailable:
            # The page has already taken the code out of its address: a
            # retry needs a fresh link.
            raise ApiError(
                "store_unavailable", "askd cannot record this link's use right now; run `askd open` again in a moment"
            ) from None
        if not first:
            raise ApiError("unauthorized", "this link was already used; run `askd open` again")
        token = tokens.issue(self.ctx.secret, "user", code.sub, code.ttl)
        self.send_json({"token": token, "userId": code.sub})


def routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/v1/open", OpenCodeHandler, {"ctx": ctx}),
        (r"/", PageHandler, {}),
        (r"/sw.js", ServiceWorkerHandler, {}),
        (r"/static/(.*)", StaticHandler, {"path": str(STATIC_DIR)}),
    ]
