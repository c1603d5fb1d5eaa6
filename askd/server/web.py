"""The built-in web page: static files shipped inside the package, served
with strict security headers (no inline script, no framing, no referrer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tornado.web

from askd.server.base import house_headers

STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "static"

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
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


class PageHandler(tornado.web.RequestHandler):
    """``/``: the inbox page. The token arrives in the fragment (``#token=``,
    never sent here) or as a one-time code (``#code=``); the page's own
    script takes it out of the address bar."""

    def set_default_headers(self) -> None:
        _secure(self)
        self.set_header("Cache-Control", "no-store")

    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC_DIR / "index.html").read_bytes())


def routes() -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/", PageHandler, {}),
        (r"/static/(.*)", StaticHandler, {"path": str(STATIC_DIR)}),
    ]
