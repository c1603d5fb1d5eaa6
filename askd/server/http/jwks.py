"""``GET /.well-known/jwks.json`` (protocol section 16): the public keys that
check receipts. Public listener, no token: a key that only verifies is no
secret, and an executor checking a receipt may hold no askd token."""

from __future__ import annotations

from askd.server.http.base import ApiHandler

# Keys change only when askd restarts with other receipts settings; a
# verifier that meets an unknown kid fetches again (docs/protocol.md, section 16).
MAX_AGE_SECONDS = 300


class JwksHandler(ApiHandler):
    def get(self) -> None:
        self.set_header("Cache-Control", f"public, max-age={MAX_AGE_SECONDS}")
        # Public keys: a page on any origin may check a receipt with them.
        self.set_header("Access-Control-Allow-Origin", "*")
        self.send_json(self.ctx.receipts.jwks)
